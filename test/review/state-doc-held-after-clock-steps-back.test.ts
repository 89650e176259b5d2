/**
 * Review finding (lh-state's rate after a wall-clock step): the rate gate measured its gap on the wall clock
 * (Date.now). After the clock stepped back (an NTP correction, a VM resumed, a daylight-saving mistake on the host),
 * `lastAt + gap - now` was the whole step: a change inside that "gap" was held for as long as the clock went back
 * (an hour back: the lab's state document an hour late, the broker and the fleet tab showing the state before it;
 * input msgs and the repeat held with it). A gate whose last emission lies in the future now lets the next one out.
 * Seeded: a few drawn steps and rates per run (LH_SEED to replay, LH_CASES to extend).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { StateMsg, StateNode } from '../../src/nodes/lh-state/state-node';
import type { LabEvent } from '../../src/observe/lab-events';
import { admit, gapMs } from '../../src/observe/rate-gate';
import { ModelClock } from '../support/model-clock';

const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
const about = { instrumentKey: 'http://x|', instrument: 'X' };

describe('review: lh-state after the wall clock steps back', function () {
  it('property: the latest document goes out within one gap of a change, whatever the step back', function () {
    console.log(`      seed ${seed} (LH_SEED to replay, LH_CASES to extend)`);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 * 86_400_000 }),
        fc.constantFrom(0.1, 1, 2, 50),
        fc.integer({ min: 0, max: 3 }),
        (stepBack, perSecond, kind) => {
          const clock = new ModelClock(); // the timers' (monotonic) time
          const wall = 1_800_000_000_000; // Date.now, less the step back below
          let offset = 0;
          const sent: StateMsg[] = [];
          const node = new StateNode({
            ...about,
            stateTopic: 'lab/{{instrument}}/state',
            eventTopic: 'lab/{{instrument}}',
            perSecond,
            emitting: () => true,
            send: (state) => void (state && sent.push(state)),
            ...clock.options,
            now: () => wall + clock.now + offset,
          });
          try {
            node.emitNow();
            clock.runUntil(10);
            offset -= stepBack; // the host's clock set back
            const ask: LabEvent =
              kind === 0
                ? { ...about, kind: 'connection', state: 'offline', reason: 'gone' }
                : { ...about, kind: 'errors', pending: [{ source: 'A', id: String(kind), title: 't', severity: 'Error' }] };
            node.take(ask);
            clock.runUntil(clock.now + gapMs(perSecond));
            assert.deepEqual(sent[sent.length - 1]?.payload, node.document, 'the document after the change is out');
            // and the repeat / an input msg later is answered too
            const before = sent.length;
            clock.runUntil(clock.now + gapMs(perSecond));
            node.resend();
            clock.runUntil(clock.now + gapMs(perSecond));
            assert.ok(sent.length > before, 'an input msg after the step back sends the document');
          } finally {
            node.close();
          }
        },
      ),
      { seed, numRuns: Number(process.env.LH_CASES ?? 30) },
    );
  });

  it('the gate: a last emission in the future (the clock went back) holds one gap, not the step', function () {
    assert.equal(admit({ held: false, lastAt: 10_000 }, 0, 1), 1000); // one gap on the timer (review81: jitter)
    assert.equal(admit({ held: false, lastAt: 10_000 }, 10_500, 1), 500); // the gap itself still holds
    assert.equal(admit({ held: false, lastAt: 10_000 }, 11_000, 1), 'now');
  });
});
