/**
 * Review finding (lh-state's document): every text of the document was clipped to 200 characters but two. `run.eta`
 * is the instrument's `estimatedEndTime` as written, and a date with a comment of any length parses (`1 jan 2027
 * 10:00:00 (…100 KiB…)`: lh-run-watch accepts it as an end time); the document, retained on the broker and sent again
 * at every change and every minute, carried it whole. `instrument` carried an lh-server's name of any length (the
 * topic takes 64 characters of it). A broker with a packet limit drops the connection of a client that publishes over
 * it, and every instrument's msgs with it ("every input bounded"). Both are now clipped as the other texts are.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { StateMsg, StateNode } from '../../src/nodes/lh-state/state-node';
import { publishLab } from '../../src/observe/lab-events';

const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);

describe("review: the document's run end time and instrument name are bounded", function () {
  it('any eta, run state and lh-server name: at most 200 characters each in the document', function () {
    console.log(`      seed ${seed} (LH_SEED to replay)`);
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('x', ' ', 'é', '😀', ':', '-'), maxLength: 5000, size: 'max' }),
        fc.string({ minLength: 1, maxLength: 5000, size: 'max' }),
        fc.string({ maxLength: 2000, size: 'max' }),
        (comment, name, state) => {
          const docs: StateMsg[] = [];
          const node = new StateNode({
            instrumentKey: 'k',
            instrument: name,
            stateTopic: 'lab/{{instrument}}/state',
            eventTopic: 'lab/{{instrument}}',
            perSecond: 50,
            emitting: () => true,
            send: (doc) => void (doc && docs.push(doc)),
            setTimer: () => 0,
            clearTimer: () => undefined,
          });
          try {
            const eta = `1 jan 2027 10:00:00 (${comment})`;
            assert.ok(!Number.isNaN(Date.parse(eta)), 'an end time lh-run-watch takes');
            publishLab({ instrumentKey: 'k', instrument: name, kind: 'run', state, started: true, progress: 0.5, eta });
            node.emitNow();
            const doc = docs[docs.length - 1].payload as { instrument: string; run: { eta: string; state: string } };
            assert.ok(doc.run.eta.length <= 200, `eta of ${doc.run.eta.length} characters`);
            assert.ok(doc.run.state.length <= 200, `run state of ${doc.run.state.length} characters`);
            assert.ok(doc.instrument.length <= 200, `instrument of ${doc.instrument.length} characters`);
            assert.ok(eta.startsWith(doc.run.eta.replace(/…$/, '')) && name.startsWith(doc.instrument.replace(/…$/, '')));
            assert.ok(JSON.stringify(doc).length < 2000, 'a document of a few hundred characters');
          } finally {
            node.close();
          }
        },
      ),
      { seed, numRuns: 40 },
    );
  });
});
