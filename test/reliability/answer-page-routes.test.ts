import assert from 'node:assert/strict';
import path from 'path';

import { fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { helper, NODE_RED_PACKAGE } from '../support/runtime';

type Msg = Record<string, unknown>;

/** The core http in / http response nodes of the runtime under test. */
const nodeRedDir = path.dirname(require.resolve(`${NODE_RED_PACKAGE}/package.json`));
const coreHttpIn = require(
  path.join(
    path.dirname(require.resolve('@node-red/nodes/package.json', { paths: [nodeRedDir] })),
    'core',
    'network',
    '21-httpin.js',
  ),
) as (RED: unknown) => unknown;

describe('answer page: routes it shares a path with', function () {
  this.timeout(20000);
  const { sim, web, pageNode } = usePageSuite();

  it("a redeploy of the page node removes only its own routes: a user's http in node on the same path keeps answering", async function () {
    const server = bServerFlow(sim, { withB: false });
    const flow = (expiryHours: number): Msg[] => [
      { id: 'in', type: 'http in', url: '/lh-answer', method: 'get', wires: [['res']] },
      { id: 'res', type: 'http response', statusCode: '200' },
      ...server.nodes,
      pageNode({ path: '/lh-answer', expiryHours, wires: [[], []] }),
    ];
    const credentials = { ...server.credentials, page: { secret: 'routes-test-secret' } };
    await loadWithPage(flow(24), credentials, [coreHttpIn]);
    assert.equal((await fetchText(`${web.url}/lh-answer?hello=1`)).status, 200);

    await helper.setFlows(flow(12) as never, 'nodes', credentials as never); // only the page node restarts
    const user = await fetchText(`${web.url}/lh-answer?hello=1`);
    assert.equal(user.status, 200, `the http in node's route was removed: ${user.status} ${user.text.slice(0, 200)}`);
    assert.match(user.text, /hello/);
    // the page does not share a path with another route (issue 17.5): it stands back, so nothing of it is mounted
    const page = await fetchText(`${web.url}/lh-answer`, { form: { t: 'not-a-link' } });
    assert.equal(page.status, 404, 'the page serves nothing on a path another route holds');
  });
});
