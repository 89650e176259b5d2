// Issue 32 item 5: pending errors were notified again on every restart (Remember off by default: 3 repeated webhook
// posts after a restart). Example 02 as imported into a standard Node-RED (its chat webhook a local receiver that
// counts posts), errors raised, Node-RED stopped and started again on the same user directory: with the default
// (Remember on, its memory in the user directory) nothing is posted twice; with Remember unticked every pending error
// is reported again, as that option promises.
import assert from 'node:assert/strict';
import http from 'http';

import type { AddressInfo } from 'net';

import { Simulator } from '../../src/simulator';
import { until } from '../support/until';
import { example, FlowNode, freshUserDir, StandardRed, startRed } from './standard-red';

const PASSWORD = 'pw-restart-test';
const POLL = '/api/v1/errors/check-for-pending-errors';

describe('standard Node-RED: a restart notifies no error twice (issue 32 item 5)', function () {
  this.timeout(180_000);
  let sim: Simulator;
  let hook: http.Server;
  let posts: string[] = [];
  let red: StandardRed | undefined;

  before(async function () {
    sim = new Simulator({ users: [{ username: 'admin', password: PASSWORD }] });
    await sim.start();
    hook = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        posts.push(text);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async function () {
    await red?.stop();
    red = undefined;
  });
  after(async function () {
    await new Promise((r) => {
      hook.close(r);
      hook.closeAllConnections();
    });
    await sim.stop();
  });

  function env(): Record<string, string> {
    return {
      CHAT_WEBHOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
      LH_PUBLIC_URL: 'http://127.0.0.1:1880',
      LH_SIM_PORT: String(new URL(sim.baseUrl).port),
      LH_SIM_HTTPS_PORT: String(new URL(sim.instrumentUrl).port),
    };
  }

  /** Example 02 as imported (its Remember as the example has it unless `persist` is given), polling every 0.5 s. */
  function chatExample(persist?: boolean): FlowNode[] {
    return example('02 ').map((n) => {
      if (n.type === 'lh-server') return { ...n, credentials: { username: 'admin', password: PASSWORD } };
      if (n.type === 'lh-error-poll') return { ...n, interval: 0.5, ...(persist === undefined ? {} : { persist }) };
      return n;
    });
  }

  const raisedPosts = (): string[] => posts.filter((p) => p.includes('Restart check'));
  const polls = (): number => sim.requests.filter((r) => r.path === POLL).length;

  async function raiseTwoAndRestart(flow: FlowNode[]): Promise<number> {
    posts = [];
    sim.reset();
    const userDir = await freshUserDir();
    red = await startRed(userDir, { env: env() });
    await red.deploy(flow);
    sim.injectPendingError({ title: 'Restart check one', responses: ['Retry', 'Abort'] });
    sim.injectPendingError({ title: 'Restart check two', responses: ['Retry', 'Abort'] });
    await until(() => raisedPosts().length >= 2, 'two chat posts', 60_000);
    await red.stop();
    red = await startRed(userDir, { env: env() });
    const after = polls();
    // polls counted, not time waited: the restarted node has seen the pending list several times
    await until(() => polls() >= after + 4, 'four polls after the restart', 60_000);
    return raisedPosts().length;
  }

  it('the example as imported (Remember on by default): the two errors are posted once, not again after the restart', async function () {
    assert.ok(
      chatExample().some((n) => n.type === 'lh-error-poll' && n.persist === true),
      'example 02 remembers (persist: true)',
    );
    assert.equal(await raiseTwoAndRestart(chatExample()), 2, posts.join('\n'));
  });

  it('Remember unticked: the restart reports the two pending errors again (the option to forget stays)', async function () {
    assert.equal(await raiseTwoAndRestart(chatExample(false)), 4, posts.join('\n'));
  });
});
