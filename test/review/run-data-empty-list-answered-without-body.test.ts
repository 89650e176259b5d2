/**
 * An instrument without run records (a new one, records deleted) may answer `GET run-data` with `null` or with 204 No
 * Content, which is what ASP.NET makes of a null list: no records. The client reads it as the empty list, as it reads
 * the pending errors of an instrument without errors; before, lh-run-data's list failed ("answered 204 without a body
 * where JSON was expected") and a run start could not tell its record from the ones listed before it. A read that
 * wants one thing (a record, the protocol names) still refuses an answer without a body (a wrong URL, a proxy).
 */
import assert from 'node:assert/strict';
import http from 'http';

import { LhError, LiquidHandlerClient } from '../../src/client';
import { useClients } from '../support/client-suite';
import { closeLocal, listenLocal } from '../support/local-server';
import { USER } from '../support/runtime';

type Answer = { status: number; contentType?: string; body: string };

/** The ways an instrument says "no records" without a JSON array. */
const EMPTY_ANSWERS: Record<string, Answer> = {
  '204 No Content': { status: 204, body: '' },
  null: { status: 200, contentType: 'application/json; charset=utf-8', body: 'null' },
  '200 with no body': { status: 200, body: '' },
};

describe('review: GET run-data answered without a list (no records)', function () {
  const { sim } = useClients({ strict: false });
  let proxy: http.Server;
  let url = '';
  /** what GET run-data and GET protocols/names answer (undefined: the simulator's own answer) */
  let answer: Answer | undefined;
  const open: LiquidHandlerClient[] = [];

  before(async function () {
    proxy = http.createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (answer && req.method === 'GET' && (path === '/api/v1/run-data' || path === '/api/v1/protocols/names')) {
        req.resume();
        if (answer.contentType) res.setHeader('Content-Type', answer.contentType);
        res.statusCode = answer.status;
        return void res.end(answer.body);
      }
      const upstream = http.request(`${sim.baseUrl}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    url = await listenLocal(proxy);
  });
  after(async function () {
    await closeLocal(proxy);
  });
  afterEach(async function () {
    answer = undefined;
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  const client = (): LiquidHandlerClient => {
    const c = new LiquidHandlerClient({ baseUrl: url, credentials: { ...USER }, retries: 0 });
    open.push(c);
    return c;
  };

  for (const [what, given] of Object.entries(EMPTY_ANSWERS)) {
    it(`${what}: no run records, and the protocol names still refuse it`, async function () {
      const c = client();
      answer = given;
      assert.deepEqual(await c.runs.listRunData(), []);
      await assert.rejects(
        c.runs.protocolNames(),
        (err: LhError) => err.kind === 'response' && /without a body where JSON was expected/.test(err.message),
      );
    });
  }

  it('a list is read as before, and anything but a list is still refused', async function () {
    const c = client();
    answer = { status: 200, contentType: 'application/json', body: '[{"id":7,"protocolName":"P","runResult":"Completed"}]' };
    assert.deepEqual(
      (await c.runs.listRunData()).map((r) => r.id),
      ['7'],
    );
    answer = { status: 200, contentType: 'application/json', body: '{"items":[]}' };
    await assert.rejects(c.runs.listRunData(), /expected an array of run records/);
  });
});
