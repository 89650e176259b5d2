import assert from 'node:assert/strict';

import fc from 'fast-check';

import { StateMsg, StateNode } from '../../src/nodes/lh-state/state-node';
import type { LabEvent, PendingErrorView } from '../../src/observe/lab-events';
import {
  fold,
  MAX_LISTED_ERRORS,
  newMemory,
  sameState,
  severityRank,
  StateMemory,
  topicLevel,
} from '../../src/observe/state-document';
import { ModelClock } from '../support/model-clock';
import { stateNodeOnModelClock } from '../support/state-node-fixture';

const about = { instrumentKey: 'http://x|', instrument: 'X' };
const SEVERITIES = ['Fatal', 'Error', 'Warning', 'Info', 'odd'];

const errorArb: fc.Arbitrary<PendingErrorView> = fc.record({
  source: fc.constantFrom<'A' | 'B'>('A', 'B'),
  id: fc.integer({ min: 1, max: 30 }).map(String),
  title: fc.constantFrom('', 'Clot', 'Liquid level not detected'),
  severity: fc.constantFrom(...SEVERITIES),
});

const eventArb: fc.Arbitrary<LabEvent> = fc.oneof(
  fc.array(errorArb, { maxLength: 40 }).map((pending): LabEvent => ({ ...about, kind: 'errors', pending })),
  errorArb.map((error): LabEvent => ({ ...about, kind: 'raised', error, raisedAt: 0 })),
  errorArb.map((error): LabEvent => ({ ...about, kind: 'resolved', error })),
  errorArb.map((e): LabEvent => ({ ...about, kind: 'link', source: e.source, id: e.id, answerUrl: `https://p/${e.id}` })),
  fc.constantFrom<'online' | 'offline'>('online', 'offline').map((state): LabEvent => ({ ...about, kind: 'connection', state })),
  fc.constantFrom('Idle', 'Running', 'Paused', null).map((state): LabEvent => ({ ...about, kind: 'run', state, progress: 0.5 })),
  fc.record({ doorClosed: fc.boolean(), systemReady: fc.boolean() }).map((m): LabEvent => ({ ...about, kind: 'machine', ...m })),
  fc.boolean().map((holder): LabEvent => ({ ...about, kind: 'lease', holder })),
);

/** The reference: what the README promises of the document's error part. */
function modelPending(events: LabEvent[]): Map<string, PendingErrorView> {
  // one error: its id, title and severity (two records under one id that differ in these are two errors)
  const key = (p: PendingErrorView): string => JSON.stringify([p.source, p.id, p.title, p.severity]);
  let pending = new Map<string, PendingErrorView>();
  for (const e of events) {
    if (e.kind === 'errors') pending = new Map(e.pending.map((p) => [key(p), p]));
    if (e.kind === 'raised' && !pending.has(key(e.error))) pending.set(key(e.error), e.error);
    if (e.kind === 'resolved') pending.delete(key(e.error));
  }
  return pending;
}

describe('lh-state document (pure)', function () {
  it('counts every pending error, lists at most 20 with the most severe first, over any sequence of events', function () {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        let memory: StateMemory = newMemory('X', 0);
        events.forEach((e, i) => (memory = fold(memory, e, i)));
        const model = modelPending(events);
        const doc = memory.doc;
        assert.equal(doc.errors.pending, model.size);
        assert.ok(doc.errors.list.length <= MAX_LISTED_ERRORS);
        assert.equal(doc.errors.list.length, Math.min(MAX_LISTED_ERRORS, model.size));
        for (let i = 1; i < doc.errors.list.length; i++)
          assert.ok(severityRank(doc.errors.list[i - 1].severity) >= severityRank(doc.errors.list[i].severity));
        const top = Math.max(0, ...[...model.values()].map((e) => severityRank(e.severity)));
        assert.equal(doc.errors.mostSevere ? severityRank(doc.errors.mostSevere.severity) : 0, top);
      }),
    );
  });

  it('keeps an answer link that came before the poll listed its error, and drops it once resolved', function () {
    const e: PendingErrorView = { source: 'A', id: '7', title: 't', severity: 'Error' };
    let m = newMemory('X', 0);
    m = fold(m, { ...about, kind: 'link', source: 'A', id: '7', answerUrl: 'https://page/7' }, 1);
    m = fold(m, { ...about, kind: 'errors', pending: [e] }, 2);
    assert.equal(m.doc.errors.list[0].answerUrl, 'https://page/7');
    m = fold(m, { ...about, kind: 'resolved', error: e }, 3);
    m = fold(m, { ...about, kind: 'errors', pending: [e] }, 4); // the id listed again later: a new error, no old link
    assert.equal(m.doc.errors.list[0].answerUrl, undefined);
  });

  it("lists each error's offered responses (at most 10, each whole: one over 200 characters left out) and its link's expiry", function () {
    const long = 'R'.repeat(300);
    const sendable = 'S'.repeat(200);
    const e: PendingErrorView = {
      source: 'A',
      id: '7',
      title: 't',
      severity: 'Error',
      responses: ['Retry', 'Abort', long, sendable, ...Array.from({ length: 20 }, (_, i) => `r${i}`)],
    };
    let m = newMemory('X', 0);
    m = fold(m, { ...about, kind: 'errors', pending: [e] }, 1);
    const listed = m.doc.errors.list[0];
    assert.equal(listed.responses?.length, 10);
    assert.deepEqual(listed.responses?.slice(0, 4), ['Retry', 'Abort', sendable, 'r0']);
    assert.equal(listed.answerExpires, undefined, 'no link, no expiry');
    const answerExpires = '2026-01-02T03:04:05.000Z';
    m = fold(m, { ...about, kind: 'link', source: 'A', id: '7', answerUrl: 'https://page/7', answerExpires }, 2);
    assert.equal(m.doc.errors.list[0].answerUrl, 'https://page/7');
    assert.equal(m.doc.errors.list[0].answerExpires, answerExpires);
  });

  it('changes the document (and its time stamp) only when what it says changed', function () {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 30 }), eventArb, (events, again) => {
        let memory = newMemory('X', 0);
        events.forEach((e, i) => (memory = fold(memory, e, i)));
        const once = fold(memory, again, 1000);
        const twice = fold(once, again, 2000);
        assert.equal(twice.doc, once.doc); // the same event twice: nothing new to say
        if (sameState(once.doc, memory.doc)) assert.equal(once.doc, memory.doc);
      }),
    );
  });

  it('makes one MQTT topic level of any instrument name (no wildcard, no separator, no control character)', function () {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (name) => {
        const level = topicLevel(name);
        assert.ok(level.length >= 1 && level.length <= 64);
        assert.ok([...level].every((c) => !'+#/'.includes(c) && c.charCodeAt(0) >= 0x20 && c !== '\u007f'));
      }),
    );
  });
});

/** A StateNode at one document a second on the clock `now`, and the documents it sends. */
function documentsOf(emitting: () => boolean, now: () => number): { node: StateNode; sent: StateMsg[] } {
  const sent: StateMsg[] = [];
  const node = new StateNode({
    ...about,
    stateTopic: 's/{{instrument}}',
    eventTopic: 'e/{{instrument}}',
    perSecond: 1,
    now,
    emitting,
    send: (state) => {
      if (state) sent.push(state);
    },
  });
  return { node, sent };
}

describe('lh-state rate (StateNode on a model clock)', function () {
  it('one change told in several events (marked `more`): no document until its last one or `settled`, then all of it', function () {
    /** a change: raised and resolved events, all but the last marked `more`, closed by its last event or a 'settled' */
    const changeArb = fc
      .tuple(
        fc.array(
          fc
            .tuple(fc.boolean(), errorArb)
            .map(([raise, error]): LabEvent =>
              raise ? { ...about, kind: 'raised', error, raisedAt: 0 } : { ...about, kind: 'resolved', error },
            ),
          { minLength: 1, maxLength: 5 },
        ),
        fc.boolean(),
      )
      .map(([events, settledAfter]): LabEvent[] =>
        settledAfter
          ? [...events.map((e) => ({ ...e, more: true })), { ...about, kind: 'settled' }]
          : events.map((e, i) => ({ ...e, more: i < events.length - 1 })),
      );
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 600 }),
            fc.oneof(
              changeArb,
              eventArb.map((e) => [e]),
            ),
          ),
          { maxLength: 40 },
        ),
        fc.constantFrom(1, 5, 20),
        (steps, perSecond) => {
          const { node, sent, clock } = stateNodeOnModelClock(perSecond);
          try {
            for (const [wait, events] of steps) {
              clock.runUntil(clock.now + wait);
              for (const event of events) {
                const before = sent.length;
                node.take(event);
                const more = (event.kind === 'raised' || event.kind === 'resolved') && event.more === true;
                if (more) assert.equal(sent.length, before, `a document in the middle of a change (${event.kind})`);
              }
            }
            clock.runUntil(clock.now + 10_000);
            if (sent.length > 0) assert.deepEqual(sent[sent.length - 1], node.document, 'the latest document last');
          } finally {
            node.close();
          }
        },
      ),
    );
  });

  it('sends at most `perSecond` documents a second and always the latest one last, under any storm', function () {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), eventArb), { minLength: 1, maxLength: 80 }),
        fc.constantFrom(1, 2, 5),
        (steps, perSecond) => {
          const clock = new ModelClock();
          const sent: { at: number; msg: StateMsg }[] = [];
          const node = new StateNode({
            ...about,
            stateTopic: 'lab/{{instrument}}/state',
            eventTopic: 'lab/{{instrument}}',
            perSecond,
            emitting: () => true,
            send: (state) => {
              if (state) sent.push({ at: clock.now, msg: state });
            },
            ...clock.options,
          });
          try {
            node.emitNow();
            for (const [wait, event] of steps) {
              clock.runUntil(clock.now + wait);
              node.take(event);
            }
            clock.runUntil(clock.now + 10_000);
            const gap = Math.ceil(1000 / perSecond);
            for (let i = 1; i < sent.length; i++) assert.ok(sent[i].at - sent[i - 1].at >= gap, 'two documents inside one gap');
            assert.deepEqual(sent[sent.length - 1].msg.payload, node.document);
            assert.ok(sent.every((s) => s.msg.retain === true && s.msg.topic === 'lab/X/state'));
          } finally {
            node.close();
          }
        },
      ),
    );
  });

  it('sends nothing while another Node-RED holds the lease, and the current document at once when it comes here', function () {
    let holder = false;
    const sent: StateMsg[] = [];
    const node = new StateNode({
      ...about,
      stateTopic: 's/{{instrument}}',
      eventTopic: 'e/{{instrument}}',
      perSecond: 1,
      emitting: () => holder,
      send: (state, event) => sent.push(...[state, event].filter((m): m is StateMsg => m !== null)),
    });
    try {
      node.emitNow();
      node.take({ ...about, kind: 'raised', error: { source: 'A', id: '1', title: 't', severity: 'Fatal' }, raisedAt: 0 });
      assert.equal(sent.length, 0);
      holder = true;
      node.emitNow();
      assert.equal(sent.length, 1);
      assert.equal((sent[0].payload as { errors: { pending: number } }).errors.pending, 1);
    } finally {
      node.close();
    }
  });

  it('holds documents until the errors of a poll are in (a deploy, a new holder), then sends the one that knows them', function () {
    const sent: StateMsg[] = [];
    const node = new StateNode({
      ...about,
      stateTopic: 's/{{instrument}}',
      eventTopic: 'e/{{instrument}}',
      perSecond: 1,
      emitting: () => true,
      send: (state) => {
        if (state) sent.push(state);
      },
    });
    try {
      node.awaitPoll();
      node.emitNow(); // the deploy's own send: held
      node.take({ ...about, kind: 'connection', state: 'online' });
      assert.equal(sent.length, 0, 'no document before the poll');
      const error: PendingErrorView = { source: 'A', id: '9', title: 'Clot', severity: 'Error' };
      node.take({ ...about, kind: 'errors', pending: [error] });
      assert.equal(sent.length, 1);
      assert.equal((sent[0].payload as { errors: { pending: number } }).errors.pending, 1);
      node.awaitPoll();
      node.stopAwaiting(); // no error watch: the fallback sends what it has
      assert.equal(sent.length, 2);
    } finally {
      node.close();
    }
  });

  // found through a real broker under load (CI, test/coordination/state-mqtt-replicas.test.ts): a standby whose
  // coordination lost Redis emits (every replica watches then), and a machine read before its first poll sent the
  // errors it knew as a standby: "0 pending" while errors waited
  it('a standby that starts emitting (Redis lost) holds the document until its watch polled', function () {
    let lost = false;
    let now = 0;
    const { node, sent } = documentsOf(
      () => lost,
      () => now,
    );
    try {
      node.take({ ...about, kind: 'connection', state: 'online' });
      assert.equal(sent.length, 0, 'a standby sends nothing');
      lost = true; // lh-server's role listener may publish before lh-state's runs: take() sees the change too
      node.take({ ...about, kind: 'connection', state: 'online' });
      node.roleChanged();
      node.take({ ...about, kind: 'machine', doorClosed: true, systemReady: true });
      node.take({ ...about, kind: 'connection', state: 'online' });
      assert.equal(sent.length, 0, 'nothing before its watch polled');
      node.take({ ...about, kind: 'errors', pending: [{ source: 'A', id: '3', title: 'Clot', severity: 'Error' }] });
      assert.equal(sent.length, 1);
      assert.equal((sent[0].payload as { errors: { pending: number } }).errors.pending, 1);
      node.roleChanged(); // still emitting: nothing held again
      now += 1000;
      node.take({ ...about, kind: 'machine', doorClosed: false, systemReady: true });
      assert.equal(sent.length, 2, 'the next change goes out');
    } finally {
      node.close();
    }
  });

  // found through a real broker (test/coordination/state-mqtt-replicas.test.ts): lh-server publishes the lease event
  // before lh-state's own role listener runs, and a replica that held the lease before sent the errors it knew then
  it('a lease event that makes this Node-RED the holder holds the document until a poll (never the stale list)', function () {
    let holder = true;
    let now = 0;
    const { node, sent } = documentsOf(
      () => holder,
      () => now,
    );
    const error = (id: string): PendingErrorView => ({ source: 'A', id, title: `e${id}`, severity: 'Error' });
    try {
      node.take({ ...about, kind: 'errors', pending: [error('1'), error('2')] });
      holder = false;
      node.take({ ...about, kind: 'lease', holder: false });
      now += 5000;
      holder = true; // the lease comes back: error 1 was resolved meanwhile
      const before = sent.length;
      node.take({ ...about, kind: 'lease', holder: true, failover: true });
      assert.equal(sent.length, before, 'nothing before the new holder polled');
      node.take({ ...about, kind: 'errors', pending: [error('2')] });
      assert.equal(sent.length, before + 1);
      const doc = sent[sent.length - 1].payload as { errors: { list: PendingErrorView[] } };
      assert.deepEqual(
        doc.errors.list.map((e) => e.id),
        ['2'],
      );
    } finally {
      node.close();
    }
  });
});
