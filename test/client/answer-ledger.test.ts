import assert from 'node:assert/strict';

import { LhError } from '../../src/client';
import { AnswerLedger, MAX_ANSWERS_KEPT } from '../../src/client/answer-ledger';
import { identityOf } from '../../src/client/error-identity';
import { homeOf, resetHomes } from '../../src/instrument';
import { useClients } from '../support/client-suite';

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

  it('an answer kept without an identity (sent by id alone) neither blocks nor is shown for a new error under that id', function () {
    const ledger = new AnswerLedger(() => 1000);
    ledger.reserve('7', 'Retry', 'answer-error', { by: 'flow' }).confirm(); // msg.errorId only: nothing said what error 7 was
    const arm = identityOf({ id: '7', title: 'Arm collision: gripper jammed, do NOT retry', severity: 'Fatal' });
    assert.ok(arm);
    assert.equal(ledger.lookup('7', arm), undefined, 'the Fatal error under id 7 was not answered with Retry');
    assert.equal(ledger.lookup('7')?.response, 'Retry', 'asked by id alone, the answer is there');
    const slot = ledger.reserve('7', 'Abort', 'answer-page', { identity: arm });
    slot.confirm();
    assert.equal(ledger.lookup('7', arm)?.response, 'Abort');
    assert.equal(ledger.lookupPast('7')?.response, 'Retry', 'the earlier answer is kept as the answer to an error that is over');
  });

  it('an answer kept with its identity is shown for that error only', function () {
    const ledger = new AnswerLedger(() => 1000);
    const tip = identityOf({ id: '7', title: 'Tip pickup failed', severity: 'Error' });
    const arm = identityOf({ id: '7', title: 'Arm collision: gripper jammed, do NOT retry', severity: 'Fatal' });
    assert.ok(tip && arm);
    ledger.reserve('7', 'Retry', 'answer-error', { identity: tip }).confirm();
    assert.equal(ledger.lookup('7', tip)?.response, 'Retry');
    assert.equal(ledger.lookup('7', arm), undefined);
    assert.throws(() => ledger.reserve('7', 'Abort', 'answer-error', { identity: tip }), /already answered/);
  });

  it('is one per instrument (its home), however the URL is spelled', function () {
    try {
      const ledger = (url: string): AnswerLedger => homeOf(`${url}|`).answersA;
      assert.equal(ledger('http://LAB-1.example:80/NimbusLite/'), ledger('http://lab-1.example/NimbusLite'));
      assert.notEqual(ledger('http://lab-1.example/NimbusLite'), ledger('http://lab-2.example/NimbusLite'));
      assert.equal(
        homeOf('http://lab-1.example/NimbusLite|https://lab-1.example:8443').answersA,
        ledger('http://lab-1.example/NimbusLite'),
      );
    } finally {
      resetHomes();
    }
  });
});

describe('answer ledger: errors that are over', function () {
  it('forgets an answered error the instrument no longer lists, keeping answers in flight and listed ones', function () {
    const now = 1000;
    const ledger = new AnswerLedger(() => now);
    ledger.reserve('over', 'Retry', 'answer-error').confirm();
    ledger.reserve('listed', 'Retry', 'answer-error').confirm();
    const inFlight = ledger.reserve('sending', 'Retry', 'answer-error');
    ledger.forgetOver(new Set(['listed']), 2000);
    assert.equal(ledger.lookup('over'), undefined);
    assert.equal(ledger.lookupPast('over')?.response, 'Retry', 'who answered stays known for pages');
    assert.equal(ledger.lookup('listed')?.outcome, 'answered');
    assert.equal(ledger.lookup('sending')?.outcome, 'in-flight');
    assert.throws(() => ledger.reserve('sending', 'Abort', 'answer-error'), /is being answered/);
    inFlight.release();
  });

  it('keeps an answer confirmed after the list was asked for (the list may predate it)', function () {
    let now = 1000;
    const ledger = new AnswerLedger(() => now);
    const askedAt = ledger.stamp();
    now = 1500;
    ledger.reserve('e1', 'Retry', 'answer-error').confirm();
    ledger.forgetOver(new Set(), askedAt);
    assert.equal(ledger.lookup('e1')?.outcome, 'answered');
  });
});

describe('answer ledger: an instrument that reuses an error id', function () {
  const suite = useClients();

  it('A: once a poll no longer lists the answered error, a new error with the same id is answered', async function () {
    const client = suite.make();
    const first = suite.sim.injectPendingError({ id: '7', title: 'Clot' });
    await client.prep.answerRuntimeError({
      id: first.id,
      groupId: first.groupId,
      selectedResponse: 'Retry',
      errorData: [{ id: first.id, selectedResponse: 'Retry' }],
    });
    assert.equal((await client.prep.pendingErrors()).length, 0);
    suite.sim.reset(); // the instrument restarted: its ids start again
    const second = suite.sim.injectPendingError({ id: '7', title: 'Door open' });
    await client.prep.answerRuntimeError({
      id: second.id,
      groupId: second.groupId,
      selectedResponse: 'Abort',
      errorData: [{ id: second.id, selectedResponse: 'Abort' }],
    });
    assert.equal((await client.prep.pendingErrors()).length, 0);
    assert.equal(client.answers.lookup('7'), undefined);
  });

  it('A: without a poll that saw the error go, a second answer is refused without a request', async function () {
    const client = suite.make();
    const error = suite.sim.injectPendingError({ id: '8' });
    await client.prep.answerRuntimeError({
      id: error.id,
      groupId: error.groupId,
      selectedResponse: 'Retry',
      errorData: [{ id: error.id, selectedResponse: 'Retry' }],
    });
    const before = suite.sim.requests.length;
    await assert.rejects(
      client.prep.answerRuntimeError({
        id: error.id,
        groupId: error.groupId,
        selectedResponse: 'Abort',
        errorData: [{ id: error.id, selectedResponse: 'Abort' }],
      }),
      (err: LhError) => err.kind === 'already-answered',
    );
    assert.equal(suite.sim.requests.length, before);
  });

  it('A: after a poll saw the answered error go, a second answer to that very error is refused without a request', async function () {
    // review55: a stale msg of an error this Node-RED answered (a second link, a flow's replay) once the error left the
    // list went out again by id; the instrument refuses it at best, and one that reused the id meanwhile applies it
    const client = suite.make();
    const error = suite.sim.injectPendingError({ id: '9', title: 'Clot' });
    const answer = (response: string, identity = identityOf(error)) =>
      client.prep.answerRuntimeError(
        {
          id: error.id,
          groupId: error.groupId,
          selectedResponse: response,
          errorData: [{ id: error.id, selectedResponse: response }],
        },
        { by: 'alice', identity },
      );
    await answer('Retry');
    assert.equal((await client.prep.pendingErrors()).length, 0, 'a poll saw the error go');
    const before = suite.sim.requests.length;
    await assert.rejects(
      answer('Abort'),
      (err: LhError) => err.kind === 'already-answered' && /by alice with "Retry"/.test(err.message),
    );
    assert.deepEqual(
      suite.sim.requests.slice(before).map((r) => `${r.method} ${r.path}`),
      [],
      'nothing was sent, not even the list read',
    );
    // a new error under the id (another time stamp) is answered
    await new Promise((resolve) => setTimeout(resolve, 5));
    const next = suite.sim.injectPendingError({ id: '9', title: 'Clot', reuseId: true, groupId: error.groupId });
    await client.prep.answerRuntimeError(
      { id: next.id, groupId: next.groupId, selectedResponse: 'Abort', errorData: [{ id: next.id, selectedResponse: 'Abort' }] },
      { identity: identityOf(next) },
    );
    assert.equal(
      suite.sim.state.history
        .filter((h) => h.id === '9')
        .map((h) => h.selectedResponse)
        .join(),
      'Retry,Abort',
    );
  });

  const recovery = (uuid: string) => ({
    uuid,
    date: new Date().toISOString(),
    selectedActionId: 1,
    selectedActionIsRecovery: true,
    errorHandlingKey: 'key1',
    detailedErrorRecoveries: [],
    inputs: [],
  });

  it('B: after the unhandled list no longer holds the answered error, a second answer to it is refused without a request', async function () {
    const client = suite.make();
    suite.sim.state.handlers.add('key1');
    const uuid = '5a1c6c1e-0d4a-4c8e-9a51-2b7d9e0f1a22';
    const error = suite.sim.injectInstrumentError({ uuid });
    await client.instrument.submit('recovery', recovery(uuid), { identity: identityOf(error) });
    assert.equal((await client.instrument.unhandledErrors()).length, 0, 'a poll saw the error go');
    const before = suite.sim.requests.length;
    await assert.rejects(
      client.instrument.submit('recovery', recovery(uuid), { identity: identityOf(error) }),
      (err: LhError) => err.kind === 'already-answered',
    );
    assert.equal(suite.sim.requests.length, before, 'nothing was sent');
  });

  it('B: once the unhandled list no longer holds the answered error, a new error with the same uuid is answered', async function () {
    const client = suite.make();
    suite.sim.state.handlers.add('key1');
    const uuid = '3f2b6c1e-0d4a-4c8e-9a51-2b7d9e0f1a22';
    suite.sim.injectInstrumentError({ uuid });
    await client.instrument.submit('recovery', recovery(uuid));
    assert.equal(
      (await client.instrument.unhandledErrors()).filter((e) => e.uuid === uuid && !(e as { handled?: boolean }).handled).length,
      0,
    );
    suite.sim.reset();
    suite.sim.state.handlers.add('key1');
    suite.sim.injectInstrumentError({ uuid });
    await client.instrument.submit('recovery', recovery(uuid));
    assert.equal(suite.sim.state.instrumentErrors.find((e) => e.uuid === uuid)?.handled, true);
  });
});
