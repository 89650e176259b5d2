/**
 * The answer page's decisions (src/nodes/lh-answer-page/answer-decision.ts) over generated posts and outcomes: an
 * answer goes out only for a pending, unchanged error with a valid choice, and as it was chosen; every outcome that is
 * not an answer leaves the page saying why with a non-OK status.
 */
import assert from 'assert';

import fc from 'fast-check';

import { LhError } from '../../src/client';
import type { AnswerOutcome } from '../../src/nodes/answering/answer-error';
import { NO_CONFIRMATION, planAnswer, PostedAnswer, showOutcome } from '../../src/nodes/lh-answer-page/answer-decision';

const posted: fc.Arbitrary<PostedAnswer> = fc.record(
  {
    source: fc.constantFrom('A' as const, 'B' as const),
    key: fc.string({ minLength: 1, maxLength: 8 }),
    chosen: fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.constant(''),
      fc.constantFrom('Retry', 'Abort', '3', '0x5', '2.5', '-1'),
    ),
    already: fc.boolean(),
    record: fc.option(fc.record({ id: fc.nat(), title: fc.string({ maxLength: 12 }) }), { nil: undefined }),
    changedTo: fc.option(fc.string({ maxLength: 12 }), { nil: undefined }),
    itemProblem: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined }),
  },
  { requiredKeys: ['source', 'key', 'already'] },
);

describe('answer page decisions (pure, issue 30 point 3)', function () {
  it('sends only for a pending, unchanged error with a choice the source takes, and exactly that choice', function () {
    fc.assert(
      fc.property(posted, (p) => {
        const plan = planAnswer(p);
        const chosen = p.chosen ?? '';
        const sendable =
          !p.already &&
          p.record !== undefined &&
          p.changedTo === undefined &&
          chosen !== '' &&
          (p.source === 'A' ? p.itemProblem === undefined : Number.isInteger(Number(chosen)));
        assert.equal(plan.send !== false, sendable, JSON.stringify(p));
        if (plan.send === 'A') assert.equal(plan.response, chosen);
        if (plan.send === 'B') assert.equal(plan.actionId, Number(chosen));
        if (plan.send !== false) assert.equal(plan.send, p.source);
      }),
    );
  });

  it('names the first reason a person reads: answered, not pending, another error, no choice, then the choice', function () {
    const record = { id: 7, title: 'Clot' };
    const base: PostedAnswer = { source: 'A', key: '7', chosen: 'Retry', already: false, record };
    const outcomeOf = (p: Partial<PostedAnswer>): string => {
      const plan = planAnswer({ ...base, ...p });
      return plan.send === false ? plan.outcome.outcome : `send ${plan.send}`;
    };
    assert.equal(outcomeOf({ already: true, record: undefined, chosen: '' }), 'already-answered');
    assert.equal(outcomeOf({ record: undefined, changedTo: 'x', chosen: '' }), 'not-pending');
    assert.equal(outcomeOf({ changedTo: '"Door open"', chosen: '' }), 'changed');
    assert.equal(outcomeOf({ chosen: '', itemProblem: 'bad item' }), 'refused');
    const item = planAnswer({ ...base, itemProblem: 'item 2 does not offer Skip' });
    assert.ok(item.send === false && item.outcome.outcome === 'refused');
    assert.equal(item.send === false && item.outcome.error?.field, 'errorDataResponses');
    assert.equal(outcomeOf({ source: 'B', chosen: 'Retry' }), 'refused');
    assert.equal(outcomeOf({ source: 'B', chosen: '3' }), 'send B');
    const changed = planAnswer({ ...base, changedTo: '"Door open" (Error)' });
    assert.ok(
      changed.send === false &&
        changed.outcome.outcome === 'changed' &&
        /another error under 7: "Door open" \(Error\); nothing was sent/.test(changed.outcome.message),
    );
  });

  const error = (kind: 'network' | 'timeout' | 'http' | 'validation', statusCode?: number, field?: string): LhError =>
    new LhError('it went wrong', {
      kind,
      operation: 'answer-page',
      ...(statusCode ? { statusCode } : {}),
      ...(field ? { field } : {}),
    });
  const outcomes: fc.Arbitrary<AnswerOutcome> = fc.oneof(
    fc.constant<AnswerOutcome>({
      outcome: 'answered',
      answer: { errorKey: '1', response: 'Retry', by: 'ann', at: 1 },
      sent: {},
    } as AnswerOutcome),
    fc.constant<AnswerOutcome>({ outcome: 'already-answered', message: 'already answered' }),
    fc.constant<AnswerOutcome>({ outcome: 'not-pending', message: 'gone' }),
    fc.constantFrom<AnswerOutcome>(
      { outcome: 'refused', message: 'no', error: error('validation') },
      { outcome: 'refused', message: 'inputs.volume must be 0.5–10', error: error('validation', undefined, 'inputs.volume') },
      { outcome: 'refused', message: 'item', error: error('validation', undefined, 'errorDataResponses') },
      { outcome: 'refused', message: 'conflict', error: error('http', 409) },
    ),
    fc.constant<AnswerOutcome>({
      outcome: 'changed',
      message: 'm',
      error: error('validation'),
      current: { title: 'Door', severity: 'Error' },
    }),
    fc.constant<AnswerOutcome>({
      outcome: 'ambiguous',
      message: 'm',
      error: error('validation'),
      listed: [{ title: 'a' }, { title: 'b' }],
    }),
    fc.constantFrom<AnswerOutcome>(
      { outcome: 'failed', message: 'reset', error: error('network') },
      { outcome: 'failed', message: 'slow', error: error('timeout') },
      { outcome: 'failed', message: 'server', error: error('http', 503) },
      { outcome: 'failed', message: 'forbidden', error: error('http', 403) },
    ),
  );

  it('shows every outcome: OK only for answered (200 with given and gone), a reason for every other, never lost', function () {
    fc.assert(
      fc.property(outcomes, (o) => {
        const s = showOutcome(o);
        assert.equal(s.outcome.outcome, o.outcome, 'the outcome kind is kept');
        assert.equal(s.httpStatus, ['answered', 'already-answered', 'not-pending'].includes(o.outcome) ? 200 : 502);
        assert.equal(s.status === 'answered', o.outcome === 'answered');
        if (s.httpStatus === 502) {
          assert.equal(s.status, 'notAnswered');
          assert.ok(s.reason && s.reason.length > 0, 'says why');
        }
        const mayHave = o.outcome === 'failed' && (o.error.kind !== 'http' || (o.error.statusCode ?? 0) >= 500);
        assert.equal(s.unconfirmed === true, mayHave, 'a send that may have been applied says so');
        if (mayHave && s.outcome.outcome === 'failed')
          assert.ok(s.outcome.message.startsWith(NO_CONFIRMATION) && s.outcome.message.endsWith(`(${o.message})`));
        const inputRefused = o.outcome === 'refused' && /^(inputs|errorDataResponses)\b/.test(o.error.field ?? '');
        assert.equal(s.kind, inputRefused ? 'invalid' : o.outcome);
      }),
    );
    assert.equal(
      showOutcome({ outcome: 'changed', message: 'm', error: error('validation'), current: { title: 'Door', severity: 'Error' } })
        .reason,
      '"Door" (Error)',
    );
  });
});
