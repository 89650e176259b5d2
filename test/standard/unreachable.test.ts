// Issue 32: an instrument that cannot be reached (no simulator running) is a status and one warning per instrument in
// the log, not an [error] line per node per poll. All core examples as a user imports them into a standard Node-RED,
// their one lh-server pointed (LH_SIM_PORT) at a port where nothing answers: a local server that takes every
// connection and closes it at once, so the test can count the polls instead of waiting a fixed time.
import assert from 'node:assert/strict';
import net from 'net';

import { until } from '../support/until';
import { example, exampleFiles, FlowNode, freshUserDir, StandardRed, startRed } from './standard-red';

describe('standard Node-RED: an unreachable instrument (issue 32)', function () {
  this.timeout(240_000);
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
    const lines = (): string[] =>
      (red as StandardRed)
        .log()
        .slice(from)
        .split('\n')
        .filter((l) => /\[(error|warn)\]/.test(l));
    const isOutage = (l: string): boolean => /unreachable|ECONNRESET|ECONNREFUSED|socket hang up|offline/i.test(l);
    // the warning comes once the instrument counts as offline: after three counted failures in a row, and the polls
    // of one moment count once, so how many connections that takes depends on how the nodes' polls fall (waited
    // for, not assumed); then a dozen more connection attempts (5 s interval and back-off: counted, not timed), in
    // which a warning or an error per node or per poll would show
    await until(
      () => connections >= 12 && lines().some(isOutage),
      'the outage warning after a dozen connection attempts',
      100_000,
    );
    const atWarning = connections;
    await until(() => connections >= atWarning + 12, 'a dozen more connection attempts', 100_000);
    const logged = lines();
    const errors = logged.filter((l) => l.includes('[error]'));
    const unreachable = logged.filter(isOutage);
    assert.deepEqual(errors, [], `no [error] line:\n${logged.join('\n')}`);
    assert.equal(unreachable.length, 1, `one warning for the instrument:\n${logged.join('\n')}`);
    assert.match(unreachable[0], /\[warn\] \[lh-server:simulator\]/);
  });
});
