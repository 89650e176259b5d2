/**
 * Review finding (lh-state's rate): "at most *At most / s* documents a second per instrument" held for changes only.
 * Every input msg sent the document at once, whatever the rate, and so did the repeat (*Again every* 1 s with *At
 * most / s* 0.1): an inject or sensor stream wired to the input, or an mqtt in node on the broker's `$SYS` topics
 * (the README's "a broker that says it restarted"), published a retained document per msg, as fast as msgs came (a
 * state topic subscribed by the flow that feeds the input loops at the broker's round trip). An input msg and the
 * repeat now ask for the document within the rate: at once, or when the gap ends, the current document last.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { StateMsg, StateNode } from '../../src/nodes/lh-state/state-node';
import type { LabEvent } from '../../src/observe/lab-events';
import { ModelClock } from '../support/model-clock';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
const about = { instrumentKey: 'http://x|', instrument: 'X' };

type Step = { wait: number } & ({ input: true } | { event: LabEvent });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ wait: fc.integer({ min: 0, max: 300 }), input: fc.constant(true as const) }),
  fc.record({
    wait: fc.integer({ min: 0, max: 300 }),
    event: fc.oneof(
      fc
        .constantFrom<'online' | 'offline'>('online', 'offline')
        .map((state): LabEvent => ({ ...about, kind: 'connection', state })),
      fc.integer({ min: 0, max: 3 }).map((n): LabEvent => ({
        ...about,
        kind: 'errors',
        pending: Array.from({ length: n }, (_, i) => ({ source: 'A' as const, id: String(i), title: 't', severity: 'Error' })),
      })),
    ),
  }),
);

describe('review: input msgs and repeats within the rate of lh-state', function () {
  it('property: any storm of input msgs and changes sends at most `perSecond` documents a second, the current one last', function () {
    console.log(`      seed ${seed} (LH_SEED to replay, LH_CASES to extend)`);
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 80 }), fc.constantFrom(0.1, 1, 2, 5), (steps, perSecond) => {
        const clock = new ModelClock();
        const sent: { at: number; msg: StateMsg }[] = [];
        const node = new StateNode({
          ...about,
          stateTopic: 'lab/{{instrument}}/state',
          eventTopic: 'lab/{{instrument}}',
          perSecond,
          emitting: () => true,
          send: (state) => void (state && sent.push({ at: clock.now, msg: state })),
          ...clock.options,
        });
        try {
          node.emitNow();
          const inputs: number[] = [];
          for (const step of steps) {
            clock.runUntil(clock.now + step.wait);
            if ('input' in step) {
              inputs.push(clock.now);
              node.resend();
            } else node.take(step.event);
          }
          clock.runUntil(clock.now + 20_000);
          const gap = Math.ceil(1000 / perSecond);
          for (let i = 1; i < sent.length; i++) assert.ok(sent[i].at - sent[i - 1].at >= gap, 'two documents inside one gap');
          assert.deepEqual(sent[sent.length - 1].msg.payload, node.document, 'the current document last');
          // every input msg is answered: a document goes out at or after it
          for (const at of inputs)
            assert.ok(
              sent.some((s) => s.at >= at),
              `no document after the input msg at ${at}`,
            );
        } finally {
          node.close();
        }
      }),
      { seed, numRuns: Number(process.env.LH_CASES ?? 100) },
    );
  });

  describe('in Node-RED', function () {
    this.timeout(30000);
    const sim = useInstrument({ adminServer: true });

    it('50 input msgs at once: one document at once, the next one a gap later (At most / s 1)', async function () {
      const server = serverFlow(sim, { withB: false });
      const flow = [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
        { id: 'state', type: 'lh-state', server: 'server', rate: '1', repeat: '0', machineInterval: '0', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
      ];
      await helper.load([...packageNodes(), tlsConfigNode], flow, server.credentials);
      const docs: number[] = [];
      helper.getNode('doc').on('input', () => docs.push(Date.now()));
      await until(() => docs.length >= 1, 'the first document', 10_000);
      await until(() => Date.now() - docs[docs.length - 1] > 2500, 'the resend 2 s after the deploy', 10_000);
      const before = docs.length;
      const state = helper.getNode('state');
      const stormAt = Date.now();
      for (let i = 0; i < 50; i++) state.receive({ payload: i });
      await until(() => docs.length - before >= 2, 'a document for the storm, and the one a gap later', 10_000);
      await new Promise((resolve) => setTimeout(resolve, 1500)); // nothing more comes
      const storm = docs.slice(before);
      assert.equal(storm.length, 2, `${storm.length} documents for 50 input msgs`);
      // measured where the helper node receives them: each delivery is a step of the event loop after the node sent
      // it, which a busy machine delays by tens of milliseconds (a CI run saw the gap short of 990 ms); the exact gap
      // is the property test's above, on a model clock. Here: at once (well inside a gap), and the next a gap later
      // (no rate at all would send it in the same millisecond).
      assert.ok(storm[0] - stormAt < 800, `the first one at once (${storm[0] - stormAt} ms)`);
      assert.ok(storm[1] - storm[0] >= 800, `the second one a gap later (${storm[1] - storm[0]} ms)`);
    });
  });
});
