/**
 * Review finding (lh-state's rate on a wall clock that goes back again and again): the gate took a last emission "in
 * the future" (now < lastAt: the clock went back) as the gap passed. A clock that jitters back (a VM's clock slewed
 * by NTP, a host whose readings step back a millisecond now and then) put every emission in the future of the next
 * reading: each input msg and change of a storm went out at once, the retained document published as fast as msgs
 * came, "At most / s" not kept. A clock behind the last emission now waits one gap on the timers' (monotonic) clock:
 * a step back still costs at most one gap, never the step, and the rate holds however often the clock goes back.
 * Seeded: a few drawn storms per run (LH_SEED to replay, LH_CASES to extend).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { StateMsg, StateNode } from '../../src/nodes/lh-state/state-node';
import type { LabEvent } from '../../src/observe/lab-events';
import { gapMs } from '../../src/observe/rate-gate';
import { ModelClock } from '../support/model-clock';

const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
const about = { instrumentKey: 'http://x|', instrument: 'X' };

type Step = { wait: number; back: number } & ({ input: true } | { event: LabEvent });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    wait: fc.integer({ min: 0, max: 40 }),
    back: fc.integer({ min: 0, max: 5 }),
    input: fc.constant(true as const),
  }),
  fc.record({
    wait: fc.integer({ min: 0, max: 40 }),
    back: fc.integer({ min: 0, max: 5 }),
    event: fc.integer({ min: 0, max: 3 }).map((n): LabEvent => ({
      ...about,
      kind: 'errors',
      pending: Array.from({ length: n }, (_, i) => ({ source: 'A' as const, id: String(i), title: 't', severity: 'Error' })),
    })),
  }),
);

describe('review: lh-state on a wall clock that jitters back', function () {
  it("property: documents go out at least one gap apart (timers' time), the current one last", function () {
    console.log(`      seed ${seed} (LH_SEED to replay, LH_CASES to extend)`);
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 5, maxLength: 80 }), fc.constantFrom(1, 2, 5, 50), (steps, perSecond) => {
        const clock = new ModelClock(); // the timers' (monotonic) time
        let back = 0; // how far the wall clock went back so far
        const sent: { at: number; msg: StateMsg }[] = [];
        const node = new StateNode({
          ...about,
          stateTopic: 'lab/{{instrument}}/state',
          eventTopic: 'lab/{{instrument}}',
          perSecond,
          emitting: () => true,
          send: (state) => void (state && sent.push({ at: clock.now, msg: state })),
          ...clock.options,
          // every reading 1 ms behind the one before, whatever time passed: the worst jitter
          now: () => 1_800_000_000_000 + clock.now - ++back,
        });
        try {
          node.emitNow();
          for (const step of steps) {
            clock.runUntil(clock.now + step.wait);
            back += step.back;
            if ('input' in step) node.resend();
            else node.take(step.event);
          }
          clock.runUntil(clock.now + 2 * gapMs(perSecond));
          for (let i = 1; i < sent.length; i++)
            assert.ok(
              sent[i]!.at - sent[i - 1]!.at >= gapMs(perSecond),
              `documents ${i - 1} and ${i} went out ${sent[i]!.at - sent[i - 1]!.at} ms apart, the gap is ${gapMs(perSecond)}`,
            );
          assert.deepEqual(sent[sent.length - 1]?.msg.payload, node.document, 'the current document is out last');
        } finally {
          node.close();
        }
      }),
      { seed, numRuns: Number(process.env.LH_CASES ?? 30) },
    );
  });
});
