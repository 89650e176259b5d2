/**
 * Review finding (metrics): past MAX_INSTRUMENTS (1,000) instrument names, later instruments share the label
 * `other`. Their pending gauge was set at each one's poll to that one's count: `lh_errors_pending{instrument="other"}`
 * said how many errors the instrument polled last had, not how many the instruments folded into `other` have (an
 * alert on pending errors went quiet whenever one without errors polled after one with). It is their sum now; an
 * instrument of them removed, or standing by for another Node-RED, leaves the sum, the others' errors stay.
 */
import assert from 'node:assert/strict';

import { type PendingErrorView } from '../../src/observe/lab-events';
import { LabMetrics, MAX_INSTRUMENTS } from '../../src/observe/metrics';

const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => {
  name: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}[];

const errors = (n: number): PendingErrorView[] =>
  Array.from({ length: n }, (_, i) => ({ source: 'A' as const, id: String(i), title: `error ${i}`, severity: 'Error' }));

async function otherPending(metrics: LabMetrics): Promise<number | undefined> {
  const family = parsePrometheus((await metrics.render()).body).find((f) => f.name === 'lh_errors_pending');
  const sample = family?.metrics.find((m) => m.labels?.instrument === 'other');
  return sample === undefined ? undefined : Number(sample.value);
}

describe('review: the pending gauge of instruments folded into "other"', function () {
  it('is the sum over them, whatever order they poll in; one removed or standing by leaves the sum', async function () {
    const metrics = new LabMetrics(() => 0);
    try {
      for (let i = 0; i < MAX_INSTRUMENTS; i++)
        metrics.observe({ instrumentKey: `k${i}`, instrument: `bench ${i}`, kind: 'server', present: true });
      const past = ['x1', 'x2', 'x3'];
      for (const key of past) metrics.observe({ instrumentKey: key, instrument: key, kind: 'server', present: true });
      const poll = (key: string, n: number): void =>
        metrics.observe({ instrumentKey: key, instrument: key, kind: 'errors', pending: errors(n) });
      poll('x1', 3);
      poll('x2', 2);
      poll('x3', 0); // polled last, without errors: the gauge said 0 though 5 errors are pending
      assert.equal(await otherPending(metrics), 5);
      poll('x1', 1); // x1's list is shorter now: its own count is replaced, the others' stay
      assert.equal(await otherPending(metrics), 3);
      metrics.observe({ instrumentKey: 'x2', instrument: 'x2', kind: 'lease', holder: false });
      assert.equal(await otherPending(metrics), 1, "x2 stands by: its holder's page says its errors");
      poll('x3', 4);
      metrics.observe({ instrumentKey: 'x1', instrument: 'x1', kind: 'server', present: false });
      assert.equal(await otherPending(metrics), 4, 'x1 removed from the flows: its errors leave the sum');
      // a named instrument's gauge is its own, as before
      metrics.observe({ instrumentKey: 'k7', instrument: 'bench 7', kind: 'errors', pending: errors(2) });
      assert.equal(await otherPending(metrics), 4);
      const named = parsePrometheus((await metrics.render()).body)
        .find((f) => f.name === 'lh_errors_pending')
        ?.metrics.find((m) => m.labels?.instrument === 'bench 7');
      assert.equal(named?.labels?.instrument, 'bench 7');
      assert.equal(Number(named?.value), 2);
    } finally {
      metrics.close();
    }
  });
});
