/**
 * README, Several Node-REDs, Secrets: "Redis errors are logged once per kind, redacted." In sentinel mode with every
 * sentinel down, ioredis reports each retry with its delay in the text ("Retrying from scratch after 10ms", 20ms, …
 * up to 1000ms): the log said it again on every retry, about a hundred warnings in the first minute, because a kind
 * was the exact text. A kind is now the text with its numbers set aside.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';

import { helper, packageNodes, startServer, stopServer, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: a down Redis is logged once per kind', function () {
  this.timeout(30000);
  let sentinel: net.Server;
  let attempts = 0;
  const sockets = new Set<net.Socket>();

  before(async function () {
    // a "sentinel" that hangs up on every connection: every round ends with all sentinels unreachable
    sentinel = net.createServer((socket) => {
      attempts++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.destroy();
    });
    await new Promise<void>((resolve) => sentinel.listen(0, '127.0.0.1', resolve));
  });

  after(async function () {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => sentinel.close(() => resolve()));
  });

  beforeEach(startServer);
  afterEach(async function () {
    await helper.unload();
    await stopServer();
  });

  function coordinationWarnings(): string[] {
    const log = helper.log() as unknown as { args: [Msg][] };
    return log.args
      .map(([entry]) => entry)
      .filter((entry) => entry.type === 'lh-coordination' && entry.level === 30)
      .map((entry) => String(entry.msg));
  }

  it('sentinel mode, every sentinel hanging up: one warning over many retries', async function () {
    const port = (sentinel.address() as net.AddressInfo).port;
    attempts = 0;
    await helper.load(
      [tlsConfigNode, ...packageNodes()],
      [{ id: 'coord', type: 'lh-coordination', url: `redis://127.0.0.1:${port}`, mode: 'sentinel', sentinelName: 'lab' }],
      { coord: { password: 'hunter2hunter2' } },
    );
    await until(() => attempts >= 12, 'twelve rounds of sentinel retries', 20000);
    const warnings = coordinationWarnings();
    assert.equal(warnings.length, 1, `one warning, not one per retry:\n${warnings.join('\n')}`);
    assert.match(warnings[0], /coordination Redis: All sentinels are unreachable/);
    assert.doesNotMatch(warnings.join('\n'), /hunter2/);
  });
});
