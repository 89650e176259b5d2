import assert from 'node:assert/strict';
import { AnswerLedger, answerLedgerFor, MAX_ANSWERS_KEPT } from '../../src/client/answer-ledger';
import { LhError } from '../../src/client';

describe('answer ledger', function () {
  it('gives an error one slot: a second caller is refused while the first is in flight and after it answered', function () {
    const ledger = new AnswerLedger(() => 1000);
    const slot = ledger.reserve('e1', 'Retry', 'answer-error', { by: 'alice' });
    assert.throws(
      () => ledger.reserve('e1', 'Abort', 'answer-error'),
      (err: LhError) =>
        err.kind === 'already-answered' && err.code === 'LH_ALREADY_ANSWERED' && /is being answered by alice/.test(err.message),
    );
    slot.confirm();
    assert.throws(() => ledger.reserve('e1', 'Abort', 'answer-error'), /was already answered by alice with "Retry"/);
    assert.deepEqual(ledger.lookup('e1'), { errorKey: 'e1', response: 'Retry', by: 'alice', at: 1000, outcome: 'answered' });
  });

  it('frees the slot of a refused or failed answer, and a late release never frees a later answer', function () {
    const ledger = new AnswerLedger();
    const first = ledger.reserve('e2', 'Retry', 'answer-error');
    first.release();
    assert.equal(ledger.lookup('e2'), undefined);
    const second = ledger.reserve('e2', 'Abort', 'answer-error');
    first.release();
    second.confirm();
    second.release(); // settled: no effect
    assert.equal(ledger.lookup('e2')?.response, 'Abort');
  });

  it('keeps a bounded number of given answers, never dropping one in flight', function () {
    const ledger = new AnswerLedger();
    const inFlight = ledger.reserve('keep', 'Retry', 'answer-error');
    for (let i = 0; i < MAX_ANSWERS_KEPT + 10; i++) ledger.reserve(`e${i}`, 'Retry', 'answer-error').confirm();
    assert.equal(ledger.size, MAX_ANSWERS_KEPT);
    assert.equal(ledger.lookup('keep')?.outcome, 'in-flight');
    assert.equal(ledger.lookup('e0'), undefined, 'the oldest answers go first');
    inFlight.release();
  });

  it('is one per instrument URL, however the URL is spelled', function () {
    assert.equal(answerLedgerFor('http://LAB-1.example:80/NimbusLite/'), answerLedgerFor('http://lab-1.example/NimbusLite'));
    assert.notEqual(answerLedgerFor('http://lab-1.example/NimbusLite'), answerLedgerFor('http://lab-2.example/NimbusLite'));
  });
});
