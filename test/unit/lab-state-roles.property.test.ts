// A model of lh-state's StateNode under coordination roles (joining, standby, holder, lost) on a model clock: every
// document sent either knows the errors of a poll made since this Node-RED last started emitting (a deploy, the lease
// taken, Redis lost on a standby) or is the 10 s fallback's; none while not emitting; the rate kept; the latest last.
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { StateMsg, StateNode } from '../../src/nodes/lh-state/state-node';
import type { LabEvent, PendingErrorView } from '../../src/observe/lab-events';
import type { StateDocument } from '../../src/observe/state-document';
import { ModelClock } from '../support/model-clock';

const about = { instrumentKey: 'http://x|', instrument: 'X' };
type Role = 'joining' | 'standby' | 'holder' | 'lost';
const POLL_WAIT_MS = 10_000;

const errorArb: fc.Arbitrary<PendingErrorView> = fc.record({
  source: fc.constantFrom<'A' | 'B'>('A', 'B'),
  id: fc.integer({ min: 1, max: 6 }).map(String),
  title: fc.constantFrom('Clot', 'Liquid level'),
  severity: fc.constantFrom('Error', 'Warning'),
});

/** Every lab event but `lease` (lh-server publishes that one on a role change, below). */
const labEventArb: fc.Arbitrary<LabEvent> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.array(errorArb, { maxLength: 5 }).map((pending): LabEvent => ({ ...about, kind: 'errors', pending })),
  },
  errorArb.map((error): LabEvent => ({ ...about, kind: 'raised', error, raisedAt: 0 })),
  errorArb.map((error): LabEvent => ({ ...about, kind: 'resolved', error })),
  fc.constantFrom<'online' | 'offline'>('online', 'offline').map((state): LabEvent => ({ ...about, kind: 'connection', state })),
  fc.record({ doorClosed: fc.boolean(), systemReady: fc.boolean() }).map((m): LabEvent => ({ ...about, kind: 'machine', ...m })),
  fc
    .constantFrom('Idle', 'Running', null)
    .map((state): LabEvent => ({ ...about, kind: 'run', state, started: state === 'Running' })),
  fc.constantFrom('Completed', 'Aborted').map((result): LabEvent => ({ ...about, kind: 'run-finished', result })),
  fc
    .integer({ min: 1, max: 6 })
    .map((id): LabEvent => ({ ...about, kind: 'link', source: 'A', id: String(id), answerUrl: `https://p/${id}` })),
);

type Step =
  | { op: 'role'; role: Role; listenerFirst: boolean; sameTurn: LabEvent[] }
  | { op: 'event'; event: LabEvent }
  | { op: 'advance'; ms: number }
  | { op: 'emitNow' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    op: fc.constant('role' as const),
    role: fc.constantFrom<Role>('joining', 'standby', 'holder', 'lost'),
    listenerFirst: fc.boolean(),
    sameTurn: fc.array(labEventArb, { maxLength: 2 }),
  }),
  { weight: 3, arbitrary: fc.record({ op: fc.constant('event' as const), event: labEventArb }) },
  fc.record({ op: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: 1500 }), fc.constant(POLL_WAIT_MS)) }),
  fc.record({ op: fc.constant('emitNow' as const) }),
);

/** what is going on when a document is sent */
type Cause = 'fallback' | 'timer' | 'emitNow' | 'event';

const key = (e: PendingErrorView): string => JSON.stringify([e.source, e.id, e.title, e.severity]);

function run(initial: Role, steps: Step[], perSecond: number): void {
  let role: Role = initial;
  const emitting = (): boolean => role === 'holder' || role === 'lost';
  const clock = new ModelClock();
  let cause = 'event' as Cause;
  /** since this Node-RED last started emitting (or its deploy): the errors a poll listed and what came after it */
  let polled: Map<string, PendingErrorView> | undefined;
  /** the 10 s fallback ended the wait for a poll (the documents since say what this Node-RED knows) */
  let fellBack = false;
  const sent: {
    at: number;
    doc: StateDocument;
    cause: Cause;
    fellBack: boolean;
    polled?: Map<string, PendingErrorView>;
  }[] = [];
  const node = new StateNode({
    ...about,
    stateTopic: 's/{{instrument}}',
    eventTopic: 'e/{{instrument}}',
    perSecond,
    emitting,
    pollWaitMs: POLL_WAIT_MS,
    ...clock.options,
    send: (state: StateMsg | null) => {
      if (!state) return;
      assert.ok(emitting(), `a document while ${role}`);
      sent.push({ at: clock.now, doc: state.payload as StateDocument, cause, fellBack, polled: polled && new Map(polled) });
    },
  });
  const runTimersUntil = (to: number): void =>
    clock.runUntil(to, (timer, fire) => {
      const fallback = timer.ms === POLL_WAIT_MS;
      cause = fallback ? 'fallback' : 'timer';
      if (fallback && polled === undefined) fellBack = true;
      fire();
      cause = 'event';
    });
  const take = (event: LabEvent): void => {
    // the model: a poll's list since the start replaces what was known; raised and resolved change it after
    if (event.kind === 'errors') polled = new Map(event.pending.map((e) => [key(e), e]));
    else if (polled && event.kind === 'raised') polled.set(key(event.error), event.error);
    else if (polled && event.kind === 'resolved') polled.delete(key(event.error));
    node.take(event);
  };
  const setRole = (next: Role, listenerFirst: boolean, sameTurn: LabEvent[]): void => {
    const before = role;
    const wasEmitting = emitting();
    role = next;
    if (emitting() && !wasEmitting) [polled, fellBack] = [undefined, false]; // started emitting: nothing polled yet
    if (before === next) return; // the coordination tells no change
    // lh-server's role listener runs first: the lease event for holder and standby
    if (next === 'holder' || next === 'standby') take({ ...about, kind: 'lease', holder: next === 'holder' });
    if (listenerFirst) node.roleChanged();
    sameTurn.forEach(take);
    if (!listenerFirst) node.roleChanged();
  };
  try {
    node.awaitPoll(); // as lh-state does after construction: the deploy waits for a poll too
    for (const step of steps) {
      if (step.op === 'role') setRole(step.role, step.listenerFirst, step.sameTurn);
      else if (step.op === 'event') take(step.event);
      else if (step.op === 'advance') runTimersUntil(clock.now + step.ms);
      else {
        cause = 'emitNow';
        node.emitNow();
        cause = 'event';
      }
    }
    runTimersUntil(clock.now + POLL_WAIT_MS + 2000);

    const gap = Math.ceil(1000 / perSecond);
    sent.forEach((s, i) => {
      if (s.cause !== 'fallback' && !s.fellBack) {
        assert.ok(s.polled, `document ${i} (${s.cause}) before a poll since emitting started`);
      }
      if (s.polled) {
        assert.equal(s.doc.errors.pending, s.polled.size, `document ${i} counts what the last poll said`);
        if (s.polled.size <= s.doc.errors.list.length)
          assert.deepEqual(s.doc.errors.list.map(key).sort(), [...s.polled.keys()].sort(), `document ${i} lists it`);
      }
      if (i > 0 && s.cause !== 'emitNow' && s.cause !== 'fallback')
        assert.ok(s.at - sent[i - 1].at >= gap, `documents ${i - 1} and ${i} inside one gap`);
    });
    if (emitting() && sent.length > 0) {
      const last = sent[sent.length - 1].doc;
      assert.deepEqual({ ...last, updatedAt: '' }, { ...node.document, updatedAt: '' }, 'the latest document last');
    }
  } finally {
    node.close();
  }
}

describe('lh-state under coordination roles (StateNode on a model clock)', function () {
  it('never sends a document from before a poll since it started emitting (but the fallback), nor while not emitting', function () {
    fc.assert(
      fc.property(
        fc.constantFrom<Role>('joining', 'standby', 'holder', 'lost'),
        fc.array(stepArb, { minLength: 1, maxLength: 60 }),
        fc.constantFrom(1, 2, 5),
        (initial, steps, perSecond) => run(initial, steps, perSecond),
      ),
      { numRuns: 500 },
    );
  });
});

describe('lh-state under coordination roles: two poll nodes of one instrument (one source each)', function () {
  // state-document.ts: "two poll nodes of one instrument may poll one each"; each poll's errors event covers its
  // source only, and the other source's errors stay what this Node-RED knew: from when it held the lease before
  it('a replica that starts emitting holds the document until every source it saw polled has polled again', function () {
    let role: Role = 'holder';
    let now = 0;
    const sent: StateDocument[] = [];
    const node = new StateNode({
      ...about,
      stateTopic: 's/{{instrument}}',
      eventTopic: 'e/{{instrument}}',
      perSecond: 1,
      now: () => now,
      emitting: () => role === 'holder' || role === 'lost',
      send: (state) => {
        if (state) sent.push(state.payload as StateDocument);
      },
    });
    const b1: PendingErrorView = { source: 'B', id: 'b1', title: 'Clot', severity: 'Error' };
    const b2: PendingErrorView = { source: 'B', id: 'b2', title: 'Door', severity: 'Error' };
    try {
      node.take({ ...about, kind: 'errors', pending: [], sources: ['A'] });
      node.take({ ...about, kind: 'errors', pending: [b1], sources: ['B'] });
      role = 'standby'; // another replica holds it: b1 is resolved there and b2 raised, unseen here
      node.take({ ...about, kind: 'lease', holder: false });
      node.roleChanged();
      role = 'lost'; // Redis lost: every replica watches and emits
      node.roleChanged();
      const before = sent.length;
      now += 5000;
      node.take({ ...about, kind: 'errors', pending: [], sources: ['A'] }); // source A's poll node polled first
      assert.deepEqual(
        sent.slice(before).map((d) => d.errors.list.map((e) => e.id)),
        [],
        'no document while B is what this Node-RED knew as a standby',
      );
      now += 5000;
      node.take({ ...about, kind: 'errors', pending: [b2], sources: ['B'] });
      assert.deepEqual(
        sent.slice(before).map((d) => d.errors.list.map((e) => e.id)),
        [['b2']],
      );
    } finally {
      node.close();
    }
  });
});
