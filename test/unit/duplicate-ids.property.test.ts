/**
 * Issue 29.5: one poll answer lists two (or more) records under the same id with different titles. Each distinct error
 * (id + what the instrument says of it, per the 0.3 identity rule) is raised once while it is listed, never again
 * while it stays listed, and resolved once when it is gone; an answer to an id the list shares between different
 * errors is refused before anything is sent (`LH_AMBIGUOUS`): the instrument cannot tell which error it is for.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { checkStillTheSame } from '../../src/client/answer-ledger';
import { identityOf, listedUnder } from '../../src/client/error-identity';
import { LhError } from '../../src/client/errors';
import { answerOutcomeOf } from '../../src/nodes/answering/answer-error';
import { applyPoll, newPollMemory, type PollRules } from '../../src/nodes/lh-error-poll/poll-decisions';
import { newWatch, SeenErrors } from '../../src/nodes/lh-error-poll/seen-errors';

interface Rec {
  id: string;
  title: string;
  severity: string;
}

const rules: PollRules<Rec> = {
  baseMs: 1000,
  offlineAfter: 3,
  keyOf: (_source, r) => r.id,
  wanted: () => true,
};

const key = (r: Rec): string => `${r.id}/${r.title}`;

describe('two errors under one id in one list (issue 29.5)', function () {
  it('the issue’s case: both raised once, nothing on the polls after, the one gone resolved once', function () {
    const watch = newWatch();
    const memory = newPollMemory();
    const clot = { id: '7', title: 'Clot detected', severity: 'Error' };
    const door = { id: '7', title: 'Door open', severity: 'Warning' };
    const poll = (records: Rec[]) => applyPoll(watch, memory, [{ source: 'A', records }], rules);
    assert.deepEqual(
      poll([clot, door]).raised.map((r) => key(r.record)),
      ['7/Clot detected', '7/Door open'],
    );
    for (let i = 0; i < 5; i++) {
      const outcome = poll(i % 2 === 0 ? [clot, door] : [door, clot]);
      assert.deepEqual([outcome.raised.length, outcome.resolved.length], [0, 0], `poll ${i + 2}`);
      assert.equal(outcome.status.kind === 'pending' && outcome.status.count, 2);
    }
    const gone = poll([clot]);
    assert.deepEqual([gone.raised.length, gone.resolved.map((r) => key(r.record))], [0, ['7/Door open']]);
    assert.deepEqual([poll([clot]).resolved.length, poll([]).resolved.map((r) => key(r.record))], [0, ['7/Clot detected']]);
  });

  it('the same error listed twice under its id is one error', function () {
    const seen = new SeenErrors();
    const a = { id: '1', title: 'A', severity: 'Error' };
    assert.equal(
      seen.update<Rec>(
        [a, { ...a }],
        (r) => r.id,
        () => true,
      ).raised.length,
      1,
    );
    assert.equal(seen.size, 1);
  });

  it('random lists with duplicate ids: each distinct error raised once while listed, resolved once when gone', function () {
    const rec = fc.record({
      id: fc.constantFrom('1', '2', '3'),
      title: fc.constantFrom('a', 'b', 'c'),
      severity: fc.constant('Error'),
    });
    // each poll: a list that may hold several records under one id, exact repeats, any order
    const polls = fc.array(fc.array(rec, { maxLength: 7 }), { minLength: 1, maxLength: 20 });
    fc.assert(
      fc.property(polls, (lists) => {
        const watch = newWatch();
        const memory = newPollMemory();
        // the model: what is active; what was ever raised (a resolved error is remembered: back later, it is not new)
        const active = new Set<string>();
        const ever = new Set<string>();
        for (const list of lists) {
          const listed = new Set(list.map(key));
          const expectRaised = [...listed].filter((k) => !ever.has(k)).sort();
          const expectResolved = [...active].filter((k) => !listed.has(k)).sort();
          const outcome = applyPoll(watch, memory, [{ source: 'A', records: list }], rules);
          assert.deepEqual(outcome.raised.map((r) => key(r.record)).sort(), expectRaised, 'raised');
          assert.deepEqual(outcome.resolved.map((r) => key(r.record)).sort(), expectResolved, 'resolved');
          for (const k of expectRaised) {
            ever.add(k);
            active.add(k);
          }
          for (const k of expectResolved) active.delete(k);
          assert.equal(watch.sources.A.size, active.size, 'pending count');
        }
      }),
      { numRuns: 300, seed: 2905 },
    );
  });

  it('survives a snapshot: two errors under one id restored are neither raised again nor lost', function () {
    const seen = new SeenErrors();
    const a = { id: '7', title: 'A', severity: 'Error' };
    const b = { id: '7', title: 'B', severity: 'Error' };
    seen.update<Rec>(
      [a, b],
      (r) => r.id,
      () => true,
    );
    const copy = new SeenErrors();
    copy.restore(JSON.parse(JSON.stringify(seen.snapshot())));
    assert.equal(
      copy.update<Rec>(
        [a, b],
        (r) => r.id,
        () => true,
      ).raised.length,
      0,
    );
    assert.deepEqual(
      copy
        .update<Rec>(
          [],
          (r) => r.id,
          () => true,
        )
        .resolved.map((r) => r.title),
      ['A', 'B'],
    );
  });

  it('an answer to an id the list shares between different errors is ambiguous; the same error twice is not', function () {
    const a = { id: '7', title: 'A', severity: 'Error' };
    const b = { id: '7', title: 'B', severity: 'Error' };
    const other = { id: '8', title: 'C', severity: 'Error' };
    const seen = identityOf(a);
    assert.ok(seen);
    assert.equal(listedUnder([a, b, other], seen).kind, 'ambiguous');
    assert.equal(listedUnder([b, a], seen).kind, 'ambiguous');
    assert.equal(listedUnder([a, { ...a }, other], seen).kind, 'same');
    assert.equal(listedUnder([b, other], seen).kind, 'changed');
    assert.equal(listedUnder([other], seen).kind, 'absent');
  });

  it('checkStillTheSame refuses an ambiguous id with LH_AMBIGUOUS before anything is sent; the outcome says so', async function () {
    const a = { id: '7', title: 'A', severity: 'Error' };
    const b = { id: '7', title: 'B', severity: 'Error' };
    const identity = identityOf(a);
    const err = await checkStillTheSame(async () => [a, b], { identity }, 'answer-error').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof LhError, 'refused');
    assert.equal(err.code, 'LH_AMBIGUOUS');
    assert.equal(err.kind, 'ambiguous');
    assert.match(err.message, /error 7 is ambiguous: the instrument lists 2 different errors under this id/);
    assert.match(err.message, /"A"/);
    assert.match(err.message, /"B"/);
    assert.match(err.message, /Nothing was sent/);
    const outcome = answerOutcomeOf(err, 'answer-error');
    assert.equal(outcome.outcome, 'ambiguous');
  });
});
