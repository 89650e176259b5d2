/**
 * Review finding (answering surface): an A answer (PUT errors/runtime) whose reply was lost after the instrument
 * applied it was resent by id alone. An instrument that reuses ids (ids made from codes: "Retry" fails again, the
 * same error code comes back under the same id) may list a new error under that id by the time of the resend, and the
 * resend answered it: an answer nobody gave to an error nobody saw. Before a resend the error listed under the id is
 * checked again, as before the first attempt: another error there, or none, and nothing more is sent (the outcome is
 * the lost reply's: the answer may have been applied, check the instrument).
 */
import assert from 'node:assert/strict';

import { identityOf, LhError, LiquidHandlerClient } from '../../src/client';
import { homeOf, resetHomes } from '../../src/instrument';
import { LossyProxy, ProxyDecision } from '../reliability/lossy-proxy';
import { useInstrument } from '../support/node-suite';
import { USER } from '../support/runtime';

describe('review: a lost answer is not resent to another error under its id', function () {
  this.timeout(20000);
  let proxy: LossyProxy;
  const clients: LiquidHandlerClient[] = [];
  const sim = useInstrument({
    afterEach: async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await proxy.stop();
      resetHomes();
    },
  });

  beforeEach(async function () {
    proxy = new LossyProxy({ target: sim.baseUrl });
    await proxy.start();
  });

  function client(): LiquidHandlerClient {
    const c = new LiquidHandlerClient({
      baseUrl: `${proxy.url}/`,
      credentials: { ...USER },
      books: homeOf(`${proxy.url}|`),
      retryBaseDelayMs: 1,
    });
    clients.push(c);
    return c;
  }

  const isAnswer = (method: string, path: string): boolean => method === 'PUT' && path.endsWith('/api/v1/errors/runtime');

  /** The first answer is applied and its reply lost; then the instrument lists `next` under the id (or nothing). */
  function loseFirstAnswerThen(next: () => void): void {
    let first = true;
    proxy.decide = (r): ProxyDecision => (isAnswer(r.method, r.path) && first ? 'lose-after' : 'forward');
    proxy.afterUpstream = (r) => {
      if (!isAnswer(r.method, r.path) || !first) return;
      first = false;
      next();
    };
  }

  it('a new error listed under the id after the lost reply is not answered by a resend', async function () {
    const seen = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    loseFirstAnswerThen(() => {
      // "Retry" was applied; the step fails again at once, and the instrument raises its error under the same id
      sim.injectPendingError({ id: seen.id, reuseId: true, title: 'Door open', severity: 'Error', responses: ['Retry'] });
    });
    const identity = identityOf(seen);
    assert.ok(identity);
    const outcome = await client()
      .prep.answerRuntimeError(
        {
          id: seen.id,
          groupId: seen.groupId,
          selectedResponse: 'Retry',
          errorData: [{ id: seen.id, selectedResponse: 'Retry' }],
        },
        { by: 'operator', identity },
      )
      .then(
        () => 'answered',
        (err: unknown) => err,
      );

    const puts = proxy.log.filter((r) => isAnswer(r.method, r.path));
    assert.equal(puts.length, 1, `one answer went out; the new error under ${seen.id} got none (${puts.length} PUTs)`);
    const listed = sim.state.history.filter((r) => r.id === seen.id);
    assert.equal(listed.length, 2);
    assert.equal(listed[1].handled, false, 'the new error under the id is still pending');
    assert.ok(outcome instanceof LhError, 'no success reported for an answer without a reply');
    assert.equal(outcome.kind, 'network');
    assert.match(outcome.message, /not resent/);
  });

  it('the same error still listed under the id is resent (the lost reply of an answer not applied)', async function () {
    const seen = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    let first = true;
    proxy.decide = (r): ProxyDecision => {
      if (!isAnswer(r.method, r.path) || !first) return 'forward';
      first = false;
      return 'drop-before';
    };
    const identity = identityOf(seen);
    assert.ok(identity);
    const record = await client().prep.answerRuntimeError(
      { id: seen.id, groupId: seen.groupId, selectedResponse: 'Abort', errorData: [{ id: seen.id, selectedResponse: 'Abort' }] },
      { identity },
    );
    assert.equal(record.outcome, 'answered');
    assert.equal(proxy.log.filter((r) => isAnswer(r.method, r.path)).length, 2);
    assert.equal(sim.state.history.find((r) => r.id === seen.id)?.selectedResponse, 'Abort');
  });
});
