/**
 * The answer page's *Page path* is checked in the edit dialog only (letters, digits, - _ /). A flow that did not come
 * through the dialog (imported JSON, the admin API, a flows.json written by a script) could give a path in Express's
 * route syntax (`/:page`, `/*`, `/lh(.*)`), and the runtime registered it as is: the page then took the GET and POST
 * of a user's own endpoints (a flow's `http in` node on `/status` answered with "This link is not valid"), and the
 * route-clash check, which asks whether another route matches the page's path, did not see it. At run time the
 * path now follows the dialog's rule: another one is a config error naming the field, on the status and in the log;
 * no route; a raised error's msg goes on without a link and the reason reaches Catch nodes.
 */
import assert from 'node:assert/strict';
import path from 'path';

import { fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { helper, NODE_RED_PACKAGE } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const nodeRedDir = path.dirname(require.resolve(`${NODE_RED_PACKAGE}/package.json`));
const coreHttpIn = require(
  path.join(
    path.dirname(require.resolve('@node-red/nodes/package.json', { paths: [nodeRedDir] })),
    'core',
    'network',
    '21-httpin.js',
  ),
) as (RED: unknown) => unknown;

describe('review: an answer page path in route syntax never takes other routes', function () {
  this.timeout(20000);
  const { sim, web, pageNode } = usePageSuite();

  const PATHS = ['/:page', '/*', '/lh(.*)', ':page', '/lh-answer/:id', '/a b', '/lh-answer?x=1'];

  for (const path of PATHS) {
    it(`path ${JSON.stringify(path)}: the user's http in route answers; the page says the path is not valid`, async function () {
      await loadWithPage(
        [
          { id: 'server', type: 'lh-server', baseUrl: sim.baseUrl, clientKey: 'nodered1' },
          pageNode({ path, wires: [['out'], []] }),
          { id: 'in', type: 'http in', url: '/status', method: 'get', wires: [['res']] },
          { id: 'res', type: 'http response', statusCode: '200', wires: [] },
          { id: 'out', type: 'helper' },
        ],
        { server: { username: 'admin', password: 'labwire' } },
        [coreHttpIn],
      );
      const status = await fetchText(`${web.url}/status`);
      assert.equal(status.status, 200, `the page took GET /status: ${status.text.slice(0, 200)}`);
      assert.doesNotMatch(status.text, /This link is not valid/);

      // a raised error: the msg goes on (without a link) and done(err) gives Catch nodes why, naming the path
      const page = helper.getNode('page');
      const caught = new Promise<{ args: unknown[] }>((resolve) => page.once('call:error', resolve));
      const out = new Promise<Msg>((resolve) => helper.getNode('out').once('input', (m: Msg) => resolve(m)));
      page.receive({ payload: { id: 'E1', title: 'Tip missing' }, source: 'A', event: 'raised' });
      const [sent, error] = await Promise.all([out, caught]);
      assert.equal(sent.answerUrl, undefined, 'no link to a path the page does not serve');
      const message = String((error.args[0] as { message?: string }).message ?? error.args[0]);
      assert.match(message, /path/, message);
      assert.match(message, /letters, digits/, message);
      assert.ok((error.args[1] as Msg | undefined)?._msgid, 'the error carries the msg (Catch nodes get it)');
      await until(
        () => (helper.log().args as unknown[][]).some((a) => JSON.stringify(a).includes('letters, digits')),
        'the log names the path',
      );
    });
  }

  it('a path as the dialog allows it is served', async function () {
    await loadWithPage(
      [
        { id: 'server', type: 'lh-server', baseUrl: sim.baseUrl, clientKey: 'nodered1' },
        pageNode({ path: 'lab_2/answer-page', wires: [[], []] }),
      ],
      { server: { username: 'admin', password: 'labwire' } },
    );
    const res = await fetchText(`${web.url}/lab_2/answer-page?t=nothing`);
    assert.equal(res.status, 403);
    assert.match(res.text, /This link is not valid/);
  });
});
