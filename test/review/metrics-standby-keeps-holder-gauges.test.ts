/**
 * Review finding (metrics, several Node-REDs): `lh_errors_pending` and `lh_instrument_up` are set from the error
 * watch's polls. A standby does not poll (the lease holder does), so a Node-RED that held an instrument and lost the
 * lease to another kept, for as long as it stood by, the pending count and the up value of its last poll as holder:
 * the holder's page said `lh_errors_pending{instrument="bay 2"} 0` once the errors were answered, the standby's still
 * said 3, and an alert on pending errors fired for ever from the standby's series (a sum over the replicas counted
 * them twice). A standby's page now leaves out the up and pending gauges of an instrument (the holder's page says
 * them), and a poll that ends after the lease went elsewhere sets none; they come back with its first poll as holder,
 * or as every replica watches once Redis is lost.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { LabEvent } from '../../src/observe/lab-events';
import { LabMetrics } from '../../src/observe/metrics';

const about = { instrumentKey: 'http://127.0.0.1:8080|', instrument: 'bay 2' };
type Step = 'holder' | 'standby' | 'lost' | 'poll' | 'offline';

describe('review: the up and pending gauges of a Node-RED that stands by', function () {
  const gauges = async (metrics: LabMetrics): Promise<string[]> =>
    (await metrics.render()).body
      .split('\n')
      .filter((l) => /^lh_(instrument_up|errors_pending)\{instrument="bay 2"\}/.test(l))
      .sort();

  it('the holder lists 3 errors, loses the lease: its page says nothing of them; holder again: its next poll says', async function () {
    const metrics = new LabMetrics(() => 0);
    try {
      const pending = (n: number): LabEvent => ({
        ...about,
        kind: 'errors',
        sources: ['A'],
        pending: Array.from({ length: n }, (_, i) => ({
          source: 'A' as const,
          id: String(i),
          title: `t${i}`,
          severity: 'Error',
        })),
      });
      metrics.observe({ ...about, kind: 'lease', holder: true });
      metrics.observe({ ...about, kind: 'connection', state: 'online' });
      metrics.observe(pending(3));
      assert.deepEqual(await gauges(metrics), [
        'lh_errors_pending{instrument="bay 2"} 3',
        'lh_instrument_up{instrument="bay 2"} 1',
      ]);
      metrics.observe({ ...about, kind: 'lease', holder: false });
      assert.deepEqual(await gauges(metrics), [], 'the holder says them now');
      metrics.observe(pending(3)); // a poll that was under way when the lease went
      assert.deepEqual(await gauges(metrics), [], 'a poll ended after the lease went sets nothing');
      metrics.observe({ ...about, kind: 'lease', holder: true, failover: true });
      metrics.observe(pending(0));
      metrics.observe({ ...about, kind: 'connection', state: 'online' });
      assert.deepEqual(await gauges(metrics), [
        'lh_errors_pending{instrument="bay 2"} 0',
        'lh_instrument_up{instrument="bay 2"} 1',
      ]);
    } finally {
      metrics.close();
    }
  });

  it('property: a standby never shows up or pending; a holder or a lost coordination shows what its last poll saw', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Step>('holder', 'standby', 'lost', 'poll', 'offline'), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 5 }),
        async (steps, count) => {
          const metrics = new LabMetrics(() => 0);
          let role: 'holder' | 'standby' | 'lost' | 'none' = 'none';
          let seen: { pending?: number; up?: number } = {};
          try {
            for (const step of steps) {
              if (step === 'holder' || step === 'standby' || step === 'lost') {
                metrics.observe({
                  ...about,
                  kind: 'lease',
                  holder: step === 'holder',
                  ...(step === 'lost' ? { lost: true } : {}),
                });
                role = step;
                if (step === 'standby') seen = {};
              } else if (step === 'poll') {
                metrics.observe({
                  ...about,
                  kind: 'errors',
                  sources: ['A'],
                  pending: Array.from({ length: count }, (_, i) => ({
                    source: 'A' as const,
                    id: String(i),
                    title: 't',
                    severity: 'Error',
                  })),
                });
                metrics.observe({ ...about, kind: 'connection', state: 'online' });
                if (role !== 'standby') seen = { pending: count, up: 1 };
              } else {
                metrics.observe({ ...about, kind: 'connection', state: 'offline', reason: 'ECONNREFUSED' });
                if (role !== 'standby') seen = { ...seen, up: 0 };
              }
            }
            const want = [
              ...(seen.pending !== undefined ? [`lh_errors_pending{instrument="bay 2"} ${seen.pending}`] : []),
              ...(seen.up !== undefined ? [`lh_instrument_up{instrument="bay 2"} ${seen.up}`] : []),
            ].sort();
            assert.deepEqual(await gauges(metrics), want, `after ${steps.join(', ')}`);
          } finally {
            metrics.close();
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
