// Issue 32: an instrument that cannot be reached (no simulator running) is a status and one warning per instrument in
// the log, not an [error] line per node per poll. All core examples as a user imports them into a standard Node-RED,
// their one lh-server pointed (LH_SIM_PORT) at a port where nothing answers: a local server that takes every
// connection and closes it at once, so the test can count the polls instead of waiting a fixed time.
import assert from 'node:assert/strict';
import net from 'net';

import { until } from '../support/until';
import { example, exampleFiles, FlowNode, freshUserDir, StandardRed, startRed } from './standard-red';

describe('standard Node-RED: an unreachable instrument (issue 32)', function () {
  this.timeout(120_000);
  let red: StandardRed | undefined;
  let closer: net.Server;
  let connections = 0;
  before(async function () {
    closer = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => closer.listen(0, '127.0.0.1', resolve));
  });
  after(async function () {
    await red?.stop();
    await new Promise((r) => closer.close(r));
  });

  it('all core examples, nothing answering: one warning for the instrument, no [error] per node or per poll', async function () {
    const port = String((closer.address() as net.AddressInfo).port);
    red = await startRed(await freshUserDir(), { env: { LH_SIM_PORT: port, LH_SIM_HTTPS_PORT: port } });
    const seen = new Set<string>();
    const all: FlowNode[] = exampleFiles('examples')
      .flatMap((f) => example(f))
      .filter((n) => !seen.has(n.id) && seen.add(n.id))
      .map((n) => (n.type === 'lh-server' ? { ...n, credentials: { username: 'admin', password: 'not-sent' } } : n));
    const from = red.log().length;
    await red.deploy(all);
    // several polls of every polling node (5 s interval and back-off: counted, not timed)
    await until(() => connections >= 12, 'a dozen connection attempts', 100_000);
    const lines = red
      .log()
      .slice(from)
      .split('\n')
      .filter((l) => /\[(error|warn)\]/.test(l));
    const errors = lines.filter((l) => l.includes('[error]'));
    const unreachable = lines.filter((l) => /unreachable|ECONNRESET|ECONNREFUSED|socket hang up|offline/i.test(l));
    assert.deepEqual(errors, [], `no [error] line:\n${lines.join('\n')}`);
    assert.equal(unreachable.length, 1, `one warning for the instrument:\n${lines.join('\n')}`);
    assert.match(unreachable[0], /\[warn\] \[lh-server:simulator\]/);
  });
});
