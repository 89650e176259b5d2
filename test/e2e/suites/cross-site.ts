/**
 * Issue 17.3 and 17.5 in a real Node-RED (embedded, editor and HTTP nodes on one server at "/", adminAuth off, as
 * `node-red` starts by default): the editor app in front adds `Access-Control-Allow-Origin: *` and parses bodies up
 * to 5 MiB for every request. The answer page's replies carry no CORS grant, its 16 KiB form cap holds all the same,
 * and the lh-server editor endpoints refuse other sites while the editor's own requests pass. It runs in the e2e
 * file's embedded Node-RED (one runtime per process); the pure decision's property is in
 * test/reliability/cross-site.test.ts.
 */
import assert from 'node:assert/strict';

import { Simulator } from '../../../src/simulator';
import { EmbeddedRed, FlowNode } from '../../support/embedded-red';
import { requestText, TextResponse } from '../../support/http-text';
import { startSimulator, USER } from '../../support/runtime';
import { pageForm } from './common';

function get(url: string, headers: Record<string, string> = {}): Promise<TextResponse> {
  return requestText(url, { method: 'GET', agent: false, headers });
}

function post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<TextResponse> {
  const body = Buffer.from(new URLSearchParams(fields).toString());
  return requestText(
    url,
    {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': body.length, ...headers },
    },
    body,
  );
}

const FOREIGN = 'http://evil.example';

export function crossSiteSuite(ctx: { red: EmbeddedRed }): void {
  describe('cross-site requests against a real Node-RED (issue 17.3, 17.5)', function () {
    this.timeout(60000);
    let red: EmbeddedRed;
    let sim: Simulator;
    let link = '';

    before(async function () {
      sim = await startSimulator();
      red = ctx.red;
      const flow: FlowNode[] = [
        { id: 'tab', type: 'tab', label: 'cross-site' },
        { id: 'server', type: 'lh-server', name: 'sim', baseUrl: sim.baseUrl, instrumentUrl: '', clientKey: 'x', timeout: 5000 },
        {
          id: 'poll',
          type: 'lh-error-poll',
          z: 'tab',
          server: 'server',
          source: 'A',
          interval: 0.5,
          listen: false,
          wires: [['page'], [], []],
        },
        {
          id: 'page',
          type: 'lh-answer-page',
          z: 'tab',
          server: 'server',
          publicUrl: red.url,
          publicUrlType: 'str',
          path: '/lh-answer',
          wires: [['dbg'], []],
        },
        {
          id: 'dbg',
          type: 'debug',
          z: 'tab',
          active: true,
          tosidebar: true,
          complete: 'answerUrl',
          targetType: 'msg',
          wires: [],
        },
      ];
      const seen = red.nextDebug('dbg');
      await red.deploy(flow, { server: { ...USER }, page: { secret: 'cross-site-secret' } });
      sim.injectPendingError({ title: 'Tip pickup failed', responses: ['Retry', 'Abort'] });
      link = String((await seen).msg);
      assert.match(link, /\/lh-answer\?t=/);
    });
    after(async function () {
      await red.deploy([]);
      await sim.stop();
    });

    it("the editor app grants every origin (the premise), the answer page's replies grant none", async function () {
      const editor = await get(`${red.url}/settings`, { Origin: FOREIGN });
      assert.equal(editor.headers['access-control-allow-origin'], '*', 'Node-RED adds the CORS grant in front of everything');
      for (const url of [link, `${red.url}/lh-answer?t=forged`]) {
        const page = await get(url, { Origin: FOREIGN });
        assert.ok([200, 403].includes(page.status), `${page.status}`);
        assert.equal(page.headers['access-control-allow-origin'], undefined, `${url}: a foreign page could read the form token`);
      }
      const posted = await post(`${red.url}/lh-answer`, { t: 'forged' }, { Origin: FOREIGN });
      assert.equal(posted.status, 403);
      assert.equal(posted.headers['access-control-allow-origin'], undefined);
    });

    it('refuses a 20 KiB form although the editor app parsed the body first (413, nothing answered)', async function () {
      const form = pageForm((await get(link)).text);
      assert.ok(form.form !== '', 'the page shows a form');
      sim.clearRequests();
      const big = await post(link.split('?')[0], { t: form.t, form: form.form, by: 'x'.repeat(20 * 1024), response: 'Retry' });
      assert.equal(big.status, 413, big.text.slice(0, 300));
      assert.equal(sim.requests.filter((r) => r.method === 'PUT').length, 0, 'nothing was answered');
    });

    it('lh-server editor endpoints: a foreign origin is refused, the editor itself (same origin) is served', async function () {
      const paths = ['/lh-server/server/service-routines', '/lh-server/server/protocols/1/steps', '/lh-server/step-types'];
      for (const path of paths) {
        const foreign = await get(`${red.url}${path}`, { Origin: FOREIGN });
        assert.equal(foreign.status, 403, `${path}: ${foreign.status} ${foreign.text.slice(0, 200)}`);
        assert.match(foreign.text, /cross-site read refused/);
        const fetchSite = await get(`${red.url}${path}`, { 'Sec-Fetch-Site': 'cross-site' });
        assert.equal(fetchSite.status, 403);
        const sameSite = await get(`${red.url}${path}`, { 'Sec-Fetch-Site': 'same-site', Origin: 'http://127.0.0.1:1' });
        assert.equal(sameSite.status, 403, 'another port of the same host is another origin');
        const editor = await get(`${red.url}${path}`, { 'Sec-Fetch-Site': 'same-origin', Origin: red.url });
        assert.equal(editor.status, 200, `${path}: the editor's own request`);
        const script = await get(`${red.url}${path}`);
        assert.equal(script.status, 200, `${path}: no browser page at all (curl)`);
      }
      const json = Buffer.from(JSON.stringify({ id: 'server', baseUrl: sim.baseUrl, password: '__PWRD__' }));
      const preflighted = await requestText(
        `${red.url}/lh-server/test-connection`,
        {
          method: 'POST',
          agent: false,
          headers: { Origin: FOREIGN, 'Content-Type': 'application/json', 'Content-Length': json.length },
        },
        json,
      );
      assert.equal(preflighted.status, 403, 'a JSON post from another site (after the preflight Node-RED grants) is refused too');
    });
  });
}
