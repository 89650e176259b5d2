/**
 * Issue 17.1, the class: instruments reuse error ids at any moment. Over generated sequences of list reads, pushed
 * frames, page views, policy decisions and answers, with ids reused before an answer, while it is in flight, after
 * the error was resolved, between a page view and its submit, between a policy's decision and its send, the pure
 * decisions the nodes use (answer ledger, identity check, poll memory, push decisions) keep two promises:
 *
 * - nothing is ever sent to an error whose identity differs from the one the person or rule saw, and no page shows
 *   an answer given to another error as this error's answer;
 * - every distinct error (id + identity) a poll listed or a frame pushed is raised exactly once.
 *
 * The instrument is a small model: the errors it lists, the firmware errors it holds (socket only), one live error
 * per id (a new error under an id means the instrument forgot the old one, as after a restart).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { ErrorFrame, PushedError } from '../../src/client';
import { AnswerLedger, AnswerSlot, checkStillTheSame, listedKeys } from '../../src/client/answer-ledger';
import { type ErrorIdentity, identityOf } from '../../src/client/error-identity';
import { LhError } from '../../src/client/errors';
import { answerInTheWay } from '../../src/nodes/lh-answer-page/page-view';
import { applyPoll, newPollMemory, type PollRules } from '../../src/nodes/lh-error-poll/poll-decisions';
import { adoptListed, applyErrorFrame } from '../../src/nodes/lh-error-poll/push-decisions';
import { newWatch } from '../../src/nodes/lh-error-poll/seen-errors';
import type { PolledError } from '../../src/nodes/shared/poll-messages';

interface Rec {
  id: string;
  title: string;
  severity: string;
  errorResponses: { response: string }[];
}

type Op =
  | { k: 'raise'; id: string; severity: string }
  | { k: 'resolve'; id: string }
  | { k: 'poll' }
  | { k: 'see'; id: string; stale: boolean }
  | { k: 'answerById'; id: string }
  | { k: 'answerByIdOnly'; id: string }
  | { k: 'start'; n: number }
  | { k: 'finish'; n: number }
  | { k: 'view'; n: number }
  | { k: 'push'; id: string }
  | { k: 'pushListed'; id: string }
  | { k: 'pushResolved'; id: string };

const ids = fc.constantFrom('1', '2');
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ k: fc.constant('raise' as const), id: ids, severity: fc.constantFrom('Error', 'Fatal') }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('resolve' as const), id: ids }) },
  { weight: 4, arbitrary: fc.constant({ k: 'poll' as const }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('see' as const), id: ids, stale: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('answerById' as const), id: ids }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('answerByIdOnly' as const), id: ids }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('start' as const), n: fc.nat(20) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('finish' as const), n: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('view' as const), n: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('push' as const), id: ids }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('pushListed' as const), id: ids }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('pushResolved' as const), id: ids }) },
);

const rules: PollRules<PolledError> = {
  baseMs: 5000,
  offlineAfter: 3,
  keyOf: (_source, record) => String((record as Rec).id),
  wanted: () => true,
};

/** What a person (page form), a rule (policy default) or a flow msg saw and decided to answer. */
interface Intent {
  seen: Rec;
  identity: ErrorIdentity;
  response: string;
  slot?: AnswerSlot;
  done: boolean;
}

async function run(ops: Op[]): Promise<void> {
  let clock = 1_000;
  let serial = 0;
  const ledger = new AnswerLedger(() => clock);
  const listed = new Map<string, Rec>();
  const firmware = new Map<string, Rec>();
  const watch = newWatch();
  const memory = newPollMemory();
  /** the list as the last read saw it: what a page view from the shared (cached) read shows */
  let lastRead: Rec[] = [];
  const intents: Intent[] = [];
  /** response → the title of the error the instrument applied it to */
  const appliedTo = new Map<string, string>();
  const raised: string[] = [];
  /** every error a poll listed or a frame pushed: each must be raised exactly once */
  const mustRaise = new Set<string>();

  const record = (id: string, severity: string, prefix: string): Rec => ({
    id,
    title: `${prefix} ${++serial}`,
    severity,
    errorResponses: [{ response: 'Retry' }, { response: 'Abort' }],
  });
  /** the instrument's list, read as pendingErrors() reads it (the ledger forgets answered errors no longer listed) */
  const readList = (): Rec[] => {
    const askedAt = ledger.stamp();
    clock += 1;
    const list = [...listed.values()].map((r) => ({ ...r }));
    ledger.forgetOver(listedKeys(list, 'id'), askedAt);
    lastRead = list;
    return list;
  };
  const frame = (f: ErrorFrame): void => {
    const outcome = applyErrorFrame(watch, f, rules);
    for (const r of outcome.raised) raised.push((r.record as Rec).title);
  };
  const poll = (): void => {
    const list = readList();
    for (const r of list) mustRaise.add(r.title);
    const results = [{ source: 'A' as const, records: list as PolledError[] }];
    adoptListed(watch, results, rules);
    const outcome = applyPoll(watch, memory, results, rules, { failures: 0, offlineAfter: rules.offlineAfter }, () => 0.5);
    for (const r of outcome.raised) raised.push((r.record as Rec).title);
  };
  /** The answer reaches the instrument: applied to whatever it lists under the id now. */
  const deliver = (id: string, response: string): string | undefined => {
    const target = listed.get(id);
    if (!target) return undefined;
    listed.delete(id); // answered: no longer listed
    appliedTo.set(response, target.title);
    return target.title;
  };
  /** Start of an answer (page submit, policy send, flow msg): the page's "already answered" check, then the slot. */
  const start = (intent: Intent): void => {
    const given = ledger.lookup(intent.seen.id, intent.identity);
    if (given?.outcome === 'answered') {
      assert.equal(appliedTo.get(given.response), intent.seen.title, 'an answer shown as already given went to this very error');
      intent.done = true;
      return;
    }
    try {
      intent.slot = ledger.reserve(intent.seen.id, intent.response, 'answer-error', { identity: intent.identity });
    } catch (err) {
      assert.equal((err as LhError).kind, 'already-answered');
      const body = (err as LhError).body as { outcome: string; response: string };
      if (body.outcome === 'answered')
        assert.equal(appliedTo.get(body.response), intent.seen.title, 'refused as answered: by an answer to this error');
      intent.done = true;
    }
  };
  /** The check against a fresh read (nothing sent to a changed error), then the send, as the client does it. */
  const finish = async (intent: Intent): Promise<void> => {
    const slot = intent.slot;
    if (!slot) return;
    intent.slot = undefined;
    intent.done = true;
    try {
      await checkStillTheSame(async () => readList(), { identity: intent.identity }, 'answer-error');
    } catch (err) {
      assert.equal((err as LhError).kind, 'changed');
      const now = listed.get(intent.seen.id);
      assert.ok(now && now.title !== intent.seen.title, 'refused as changed only when another error has the id');
      slot.release();
      return;
    }
    const title = deliver(intent.seen.id, intent.response);
    if (title === undefined) return slot.release(); // 404: not pending, nothing applied
    assert.equal(title, intent.seen.title, `the answer ${intent.response} was applied to the error that was seen`);
    clock += 1;
    slot.confirm();
  };

  for (const o of ops) {
    clock += 1;
    switch (o.k) {
      case 'raise':
        // one live error per id on the instrument: a new one under an id means the old one is forgotten there
        // (restart, or the old error left), without a resolution frame
        firmware.delete(o.id);
        listed.set(o.id, record(o.id, o.severity, 'listed'));
        break;
      case 'resolve':
        listed.delete(o.id);
        break;
      case 'poll':
        poll();
        break;
      case 'see': {
        // a page view from the shared read (maybe older), a policy decision or a flow msg from the last poll
        const list = o.stale ? lastRead : readList();
        const seen = list.find((r) => r.id === o.id);
        const identity = seen && identityOf(seen);
        if (seen && identity) intents.push({ seen, identity, response: `r${++serial}`, done: false });
        break;
      }
      case 'answerById': {
        // lh-answer-error with msg.errorId alone: the error found in the list under the id is the one answered
        const seen = readList().find((r) => r.id === o.id);
        const identity = seen && identityOf(seen);
        if (!seen || !identity) break;
        const intent: Intent = { seen, identity, response: `r${++serial}`, done: false };
        intents.push(intent);
        start(intent);
        await finish(intent);
        break;
      }
      case 'answerByIdOnly': {
        // an answer by id alone, the error unknown to the sender (lh-submit-recovery with a uuid only): the ledger
        // keeps no identity; it must neither block nor be shown for an error whose identity is known
        const response = `r${++serial}`;
        let slot: AnswerSlot;
        try {
          slot = ledger.reserve(o.id, response, 'answer-error');
        } catch {
          break;
        }
        if (deliver(o.id, response) === undefined) slot.release();
        else slot.confirm();
        break;
      }
      case 'start': {
        const open = intents.filter((i) => !i.done && !i.slot);
        if (open.length > 0) start(open[o.n % open.length]);
        break;
      }
      case 'finish': {
        const flying = intents.filter((i) => i.slot);
        if (flying.length > 0) await finish(flying[o.n % flying.length]);
        break;
      }
      case 'view': {
        // a later visit of a page link: an answer shown is one given to the error the link was made for
        if (intents.length === 0) break;
        const intent = intents[o.n % intents.length];
        const given = ledger.lookup(intent.seen.id, intent.identity) ?? ledger.lookupPast(intent.seen.id, intent.identity);
        if (given?.outcome === 'answered')
          assert.equal(appliedTo.get(given.response), intent.seen.title, 'the page shows this error’s answer');
        break;
      }
      case 'push': {
        const fw = record(o.id, 'Error', 'firmware');
        listed.delete(o.id);
        firmware.set(o.id, fw);
        mustRaise.add(fw.title);
        frame({ kind: 'raised', error: { ...fw, message: '', source: 'firmware' } as unknown as PushedError });
        break;
      }
      case 'pushListed': {
        // a listed error pushed too, without a source (reads as firmware): it is still one error
        const r = listed.get(o.id);
        if (!r) break;
        mustRaise.add(r.title);
        frame({ kind: 'raised', error: { ...r, message: '', source: 'firmware' } as unknown as PushedError });
        break;
      }
      case 'pushResolved':
        if (firmware.delete(o.id)) frame({ kind: 'resolved', resolvedId: o.id });
        break;
    }
  }
  poll(); // a last poll sees what is still listed
  for (const intent of intents.filter((i) => i.slot)) await finish(intent);

  const counts = new Map<string, number>();
  for (const t of raised) counts.set(t, (counts.get(t) ?? 0) + 1);
  for (const [title, n] of counts) assert.equal(n, 1, `${title} raised ${n} times`);
  for (const title of mustRaise) assert.ok(counts.has(title), `${title} was never raised`);
}

describe('reused error ids at every moment (property over generated histories)', function () {
  this.timeout(60000);

  it('nothing is sent to, or shown as answered for, another error than the one seen; every error is raised exactly once', async function () {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), (ops) => run(ops)),
      { numRuns: 2000 },
    );
  });

  it('the issue’s cases as histories: a form answered after the id was reused; a door error under a resolved id', async function () {
    // page form for error 7, id reused before the submit: refused as changed, nothing applied
    await run([
      { k: 'raise', id: '1', severity: 'Error' },
      { k: 'see', id: '1', stale: false },
      { k: 'raise', id: '1', severity: 'Fatal' },
      { k: 'start', n: 0 },
      { k: 'finish', n: 0 },
    ]);
    // an answer by id alone went to the first error; the page of the error that reused the id offers its form
    await run([
      { k: 'raise', id: '1', severity: 'Error' },
      { k: 'answerByIdOnly', id: '1' },
      { k: 'raise', id: '1', severity: 'Fatal' },
      { k: 'see', id: '1', stale: false },
      { k: 'view', n: 0 },
      { k: 'start', n: 0 },
      { k: 'finish', n: 0 },
    ]);
    // resolved, then a new error under the id for a short while between polls that see it
    await run([
      { k: 'raise', id: '1', severity: 'Error' },
      { k: 'poll' },
      { k: 'resolve', id: '1' },
      { k: 'poll' },
      { k: 'raise', id: '1', severity: 'Error' },
      { k: 'poll' },
      { k: 'resolve', id: '1' },
      { k: 'push', id: '1' },
    ]);
  });
  it('a refusal as already answered names the earlier answer only when it went to the error the link was made for', function () {
    const tip = identityOf({ id: '7', title: 'Tip pickup failed', severity: 'Error' });
    const arm = identityOf({ id: '7', title: 'Arm collision: gripper jammed, do NOT retry', severity: 'Fatal' });
    assert.ok(tip && arm);
    const ledger = new AnswerLedger(() => 1000);
    ledger.reserve('7', 'Retry', 'answer-error', { by: 'alice', identity: tip }); // in flight
    let previous: unknown;
    try {
      ledger.reserve('7', 'Abort', 'answer-page', { identity: arm });
    } catch (err) {
      previous = (err as LhError).body;
    }
    assert.ok(previous, 'refused while the other answer is in flight');
    type Kept = Parameters<typeof answerInTheWay>[0];
    assert.equal(answerInTheWay(previous as Kept, arm), undefined, 'not shown as the answer of the Fatal error');
    assert.equal(answerInTheWay(previous as Kept, tip)?.by, 'alice');
    const byIdAlone = { errorKey: '7', response: 'Retry', at: 1, outcome: 'answered' as const };
    assert.equal(answerInTheWay(byIdAlone, arm), undefined);
  });
});
