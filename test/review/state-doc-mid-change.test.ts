/**
 * Review finding (review13): a change told in several lab events (marked `more`, closed by its last event or a
 * 'settled') still let lh-state send the step between. a1899d8 only skipped the offer of the `more` event itself;
 * coordinated, a Redis round trip lies between two events of a change (error-watch's gate path), and in that gap the
 * rate timer of an earlier document, any other lab event (a run's progress, a machine read, a connection change) or
 * emitNow (the `repeat` timer, an input msg, the 10 s poll-wait fallback) sent the document as it was half way: the
 * old firmware error gone, the new one not yet there. A change that is never closed must not hold documents for ever.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { StateNode } from '../../src/nodes/lh-state/state-node';
import type { LabEvent, PendingErrorView } from '../../src/observe/lab-events';
import type { StateDocument } from '../../src/observe/state-document';
import type { ModelClock } from '../support/model-clock';
import { ABOUT, stateNodeOnModelClock } from '../support/state-node-fixture';

const about = ABOUT;
const fw = (title: string): PendingErrorView => ({ source: 'A', id: 'fw-1', title, severity: 'Error' });

const stateNode = stateNodeOnModelClock;

const titles = (doc: StateDocument): string[] => doc.errors.list.map((e) => e.title);

/** The coordinated firmware id reuse: resolved (more), a Redis round trip, raised (more), then 'settled'. */
function reuse(node: StateNode, clock: ModelClock, between: () => void): void {
  node.take({ ...about, kind: 'resolved', error: fw('Pressure fault 0'), more: true });
  between();
  node.take({ ...about, kind: 'raised', error: fw('Pressure fault 1'), raisedAt: 0, more: true });
  node.take({ ...about, kind: 'settled' });
  clock.runUntil(clock.now + 5000);
}

describe('review: lh-state sends no document in the middle of a change, whatever happens between its events', function () {
  let made: StateNode[] = [];
  afterEach(() => {
    for (const n of made) n.close();
    made = [];
  });

  function setUp(perSecond = 1, pollWaitMs?: number): ReturnType<typeof stateNode> {
    const s = stateNode(perSecond, pollWaitMs);
    made.push(s.node);
    s.node.take({ ...about, kind: 'errors', pending: [fw('Pressure fault 0')] });
    assert.deepEqual(s.sent.map(titles), [['Pressure fault 0']]);
    return s;
  }

  it('the rate timer of an earlier document firing during the round trip', function () {
    const { node, sent, clock } = setUp();
    clock.runUntil(950);
    node.take({ ...about, kind: 'connection', state: 'online' }); // within the second: held until t=1000
    clock.runUntil(990);
    reuse(node, clock, () => clock.runUntil(1010)); // the held timer fires at 1000
    assert.deepEqual(
      sent.map(titles).filter((t) => t.length !== 1),
      [],
      JSON.stringify(sent.map(titles)),
    );
    assert.deepEqual(titles(sent[sent.length - 1]), ['Pressure fault 1']);
  });

  it('another lab event (a run) during the round trip', function () {
    const { node, sent, clock } = setUp();
    clock.runUntil(5000);
    reuse(node, clock, () => node.take({ ...about, kind: 'run', state: 'Running', progress: 0.5 }));
    assert.deepEqual(
      sent.map(titles).filter((t) => t.length !== 1),
      [],
      JSON.stringify(sent.map(titles)),
    );
    assert.deepEqual(titles(sent[sent.length - 1]), ['Pressure fault 1']);
    assert.equal(sent[sent.length - 1].run.state, 'Running');
  });

  it('emitNow (the repeat timer, an input msg) during the round trip: the document once the change is in', function () {
    const { node, sent, clock } = setUp();
    clock.runUntil(5000);
    const before = sent.length;
    reuse(node, clock, () => node.emitNow());
    assert.deepEqual(
      sent.map(titles).filter((t) => t.length !== 1),
      [],
      JSON.stringify(sent.map(titles)),
    );
    assert.ok(sent.length > before, 'the document asked for goes out (after the change)');
    assert.deepEqual(titles(sent[sent.length - 1]), ['Pressure fault 1']);
  });

  it('the poll-wait fallback firing during the round trip', function () {
    const s = stateNode(1, 10_000);
    made.push(s.node);
    const { node, sent, clock } = s;
    node.awaitPoll(); // a deploy: no watch polled yet
    node.take({ ...about, kind: 'raised', error: fw('Pressure fault 0'), raisedAt: 0 });
    clock.runUntil(9990);
    reuse(node, clock, () => clock.runUntil(10_010));
    assert.deepEqual(
      sent.map(titles).filter((t) => t.length !== 1),
      [],
      JSON.stringify(sent.map(titles)),
    );
    assert.deepEqual(titles(sent[sent.length - 1]), ['Pressure fault 1']);
  });

  it('a change never closed holds the document for a bounded time only', function () {
    const { node, sent, clock } = setUp();
    clock.runUntil(5000);
    node.take({ ...about, kind: 'resolved', error: fw('Pressure fault 0'), more: true });
    clock.runUntil(5000 + 60_000); // nothing else happens: the gate hung, or the closing event was lost
    assert.deepEqual(titles(sent[sent.length - 1]), [], 'the document says what lh-state knows, in the end');
  });

  it("property: with time and other events between a change's events, no document shows it half told", function () {
    const otherArb: fc.Arbitrary<LabEvent> = fc.oneof(
      fc
        .constantFrom<'online' | 'offline'>('online', 'offline')
        .map((state): LabEvent => ({ ...about, kind: 'connection', state })),
      fc
        .double({ min: 0, max: 1, noNaN: true })
        .map((progress): LabEvent => ({ ...about, kind: 'run', state: 'Running', progress })),
      fc.boolean().map((doorClosed): LabEvent => ({ ...about, kind: 'machine', doorClosed })),
    );
    type Between = { op: 'advance'; ms: number } | { op: 'event'; event: LabEvent } | { op: 'emitNow' };
    const betweenArb: fc.Arbitrary<Between> = fc.oneof(
      fc.integer({ min: 0, max: 1500 }).map((ms): Between => ({ op: 'advance', ms })),
      otherArb.map((event): Between => ({ op: 'event', event })),
      fc.constant<Between>({ op: 'emitNow' }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.array(betweenArb, { maxLength: 4 }), fc.boolean()), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.constantFrom(1, 5, 20),
        (rounds, perSecond) => {
          const { node, sent, clock } = stateNode(perSecond);
          made.push(node);
          node.take({ ...about, kind: 'errors', pending: [fw('t0')] });
          let title = 't0';
          rounds.forEach(([wait, between, settledAfter], i) => {
            clock.runUntil(clock.now + wait);
            const next = `t${i + 1}`;
            node.take({ ...about, kind: 'resolved', error: fw(title), more: true });
            for (const b of between) {
              if (b.op === 'advance') clock.runUntil(clock.now + b.ms);
              else if (b.op === 'event') node.take(b.event);
              else node.emitNow();
            }
            node.take({ ...about, kind: 'raised', error: fw(next), raisedAt: 0, more: settledAfter });
            if (settledAfter) node.take({ ...about, kind: 'settled' });
            title = next;
          });
          clock.runUntil(clock.now + 20_000);
          assert.deepEqual(
            sent.map(titles).filter((t) => t.length !== 1),
            [],
          );
          assert.deepEqual(sent[sent.length - 1], node.document, 'the latest document last');
        },
      ),
    );
  });
});

describe('review: two changes half told at once (two watch nodes, or a frame during a poll)', function () {
  it('the end of one does not let out the other half told', function () {
    const { node, sent, clock } = stateNode(1);
    try {
      node.take({ ...about, kind: 'errors', pending: [fw('Pressure fault 0')] });
      clock.runUntil(5000);
      // the frame's change (change 1) begins: the old error resolved, its raise waits for Redis
      node.take({ ...about, kind: 'resolved', error: fw('Pressure fault 0'), more: true, change: 1 });
      // meanwhile another watch's change (change 2) of the same instrument is told and settled
      const other: PendingErrorView = { source: 'B', id: 'u-1', title: 'Clot', severity: 'Warning' };
      node.take({ ...about, kind: 'raised', error: other, raisedAt: 0, more: true, change: 2 });
      node.take({ ...about, kind: 'settled', change: 2 });
      clock.runUntil(7000);
      node.take({ ...about, kind: 'raised', error: fw('Pressure fault 1'), raisedAt: 0, more: true, change: 1 });
      node.take({ ...about, kind: 'settled', change: 1 });
      clock.runUntil(20_000);
      const a = sent.map((d) => d.errors.list.filter((e) => e.source === 'A').map((e) => e.title));
      assert.deepEqual(
        a.filter((t) => t.length !== 1),
        [],
        JSON.stringify(a),
      );
      assert.deepEqual(titles(sent[sent.length - 1]).sort(), ['Clot', 'Pressure fault 1']);
    } finally {
      node.close();
    }
  });
});
