import { strict as assert } from 'node:assert';

import { bearer, describeStatus, JSON_PATCH, JSON_TYPE, problemOf, useLoggedInHarness } from './helpers';

interface Pending {
  id: string;
  groupId: string;
  title: string;
  message: string;
  severity: string;
  errorResponses: { response: string }[];
  errorData: { id: string }[];
  selectedResponse: string | null;
  timeStamp: string;
  handled: boolean;
}

describe('simulator: runtime errors (4.3)', function () {
  const h = useLoggedInHarness();

  const pending = async (): Promise<Pending[]> => {
    const res = await h.a.get('/api/v1/errors/check-for-pending-errors', bearer(h.token));
    assert.equal(res.status, 200, describeStatus(res));
    return res.data as Pending[];
  };
  const answer = (body: unknown) => h.a.put('/api/v1/errors/runtime', body, bearer(h.token, JSON_TYPE));

  it('lists an injected error as pending with the observed shape', async function () {
    const injected = h.sim.injectPendingError({ title: 'Clot', severity: 'Error' });
    const [p] = await pending();
    assert.equal(p.id, injected.id);
    assert.equal(p.title, 'Clot');
    assert.equal(p.severity, 'Error');
    assert.deepEqual(p.errorResponses, [{ response: 'Retry' }, { response: 'Abort' }, { response: 'Ignore' }]);
    assert.equal(p.selectedResponse, null);
    assert.equal(p.handled, false);
    assert.deepEqual(p.errorData, []);
    assert.ok(!Number.isNaN(Date.parse(p.timeStamp)));
    assert.equal(typeof p.groupId, 'string');
  });

  it('answers an error: 204, leaves the pending list, history marked handled; second answer 409', async function () {
    const e = h.sim.injectPendingError({ errorData: [{ id: 'ch1' }, { id: 'ch2', responses: ['Skip'] }] });
    const res = await answer({
      id: e.id,
      groupId: e.groupId,
      selectedResponse: 'Retry',
      errorData: [
        { id: 'ch1', selectedResponse: 'Abort' },
        { id: 'ch2', selectedResponse: 'Skip' },
      ],
    });
    assert.equal(res.status, 204, describeStatus(res));
    assert.deepEqual(await pending(), []);
    const rec = await h.a.get(`/api/v1/errors/${e.id}`, bearer(h.token));
    assert.equal(rec.status, 200);
    const r = rec.data as Record<string, unknown>;
    assert.equal(r.handled, true);
    assert.ok(!Number.isNaN(Date.parse(String(r.handledDateTime))));
    const again = await answer({ id: e.id, groupId: e.groupId, selectedResponse: 'Retry', errorData: [] });
    assert.equal(again.status, 409);
    problemOf(again);
  });

  it('rejects answers: unknown id 404, response not offered 400 listing offered ones, unknown errorData id 400, wrong media 415', async function () {
    const e = h.sim.injectPendingError({ responses: ['Continue', 'Cancel'], errorData: [{ id: 'w1' }] });
    assert.equal((await answer({ id: 'nope', selectedResponse: 'Continue', errorData: [] })).status, 404);
    const notOffered = await answer({ id: e.id, selectedResponse: 'Retry', errorData: [] });
    assert.equal(notOffered.status, 400);
    assert.match(JSON.stringify(problemOf(notOffered)), /Continue, Cancel/);
    const badItem = await answer({
      id: e.id,
      selectedResponse: 'Continue',
      errorData: [{ id: 'w9', selectedResponse: 'Continue' }],
    });
    assert.equal(badItem.status, 400);
    problemOf(badItem);
    const noResponse = await answer({ id: e.id, errorData: [] });
    assert.equal(noResponse.status, 400);
    assert.equal(
      (await h.a.put('/api/v1/errors/runtime', { id: e.id, selectedResponse: 'Continue' }, bearer(h.token, JSON_PATCH))).status,
      415,
    );
    assert.equal((await pending()).length, 1);
  });

  it('resolvePendingError() handles it as the operator would', async function () {
    const e = h.sim.injectPendingError();
    h.sim.resolvePendingError(e.id);
    assert.deepEqual(await pending(), []);
    assert.equal(h.sim.state.history[0].handled, true);
  });

  it('GET errors pages the history newest first; GET errors/{id} 404 when unknown', async function () {
    const ids = [1, 2, 3].map((n) => h.sim.injectPendingError({ title: `E${n}` }).id);
    const page = await h.a.get('/api/v1/errors?offset=0&limit=2', bearer(h.token));
    assert.equal(page.status, 200);
    const list = page.data as {
      totalItemCount: number;
      currentOffset: number;
      items: { id: string; type: string; responses: string[]; innerError: unknown; code: number }[];
    };
    assert.equal(list.totalItemCount, 3);
    assert.equal(list.currentOffset, 0);
    assert.deepEqual(
      list.items.map((i) => i.id),
      [ids[2], ids[1]],
    );
    assert.equal(list.items[0].type, 'Runtime');
    assert.deepEqual(list.items[0].responses, ['Retry', 'Abort', 'Ignore']);
    assert.deepEqual(list.items[0].innerError, {});
    assert.equal(typeof list.items[0].code, 'number');
    const rest = (await h.a.get('/api/v1/errors?offset=2&limit=2', bearer(h.token))).data as typeof list;
    assert.deepEqual(
      rest.items.map((i) => i.id),
      [ids[0]],
    );
    assert.equal((await h.a.get('/api/v1/errors/unknown-id', bearer(h.token))).status, 404);
    assert.equal((await h.a.get('/api/v1/errors?offset=-1', bearer(h.token))).status, 400);
  });

  it('clear-errors clears all but Fatal ones and reports the counts', async function () {
    h.sim.injectPendingError({ severity: 'Warning' });
    h.sim.injectPendingError({ severity: 'Error' });
    const fatal = h.sim.injectPendingError({ severity: 'Fatal' });
    const res = await h.a.put('/api/v1/errors/clear-errors', undefined, bearer(h.token));
    assert.equal(res.status, 200, describeStatus(res));
    assert.deepEqual(res.data, { numberOfErrorsCleared: 2, numberOfErrorsNotCleared: 1 });
    assert.deepEqual(
      (await pending()).map((p) => p.id),
      [fatal.id],
    );
  });

  it('requires a token', async function () {
    assert.equal((await h.a.get('/api/v1/errors/check-for-pending-errors')).status, 401);
    assert.equal((await h.a.put('/api/v1/errors/clear-errors')).status, 401);
  });
});
