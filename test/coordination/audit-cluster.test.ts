/**
 * The audit chain in a Redis Cluster (three masters, lh-coordination mode "cluster"): the compare-and-append script
 * names the stream, its head and its checkpoint, all under the instrument's hash tag, so it runs on one slot; chains
 * of instruments on different masters, two writers each, verify.
 */
import assert from 'assert';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import Redis from 'ioredis';

import { AuditRecord, AuditRedis, AuditStreamReader, readStreamChain, RedisAuditLog, verifyStreamChain } from '../../src/audit';
import { coordinationSettings } from '../../src/coordination/config';
import { connectRedis, CoordinationRedis } from '../../src/coordination/connect';
import { CoordinationKeys } from '../../src/coordination/keys';
import { actionFields, KEY, tempDir } from '../audit/chain-support';
import { describeWithRedis } from '../support/redis-server';
import { ClusterHarness } from '../support/redis-topologies';
import { until } from '../support/until';

describeWithRedis('audit: the chain in a Redis Cluster', function () {
  this.timeout(60000);
  const harness = new ClusterHarness();
  const clients: CoordinationRedis[] = [];

  before(async function () {
    if (process.env.LH_REDIS_URL) this.skip(); // needs local redis-server processes
    await harness.start();
  });
  after(async function () {
    for (const c of clients) c.disconnect();
    await harness.destroy();
  });

  it('two writers (two cluster connections) on chains of 6 instruments spread over the masters: each chain one, verified', async function () {
    const settings = coordinationSettings({
      url: harness.ports.map((p) => `redis://127.0.0.1:${p}`).join(','),
      mode: 'cluster',
      prefix: `lh-audit-cluster-${process.pid}`,
    });
    for (let i = 0; i < 2; i++) {
      const c = connectRedis(settings, {});
      c.on('error', () => undefined);
      clients.push(c);
    }
    await until(() => clients.every((c) => c.status === 'ready'), 'the cluster clients ready', 10000);
    const keys = new CoordinationKeys(settings.prefix);
    const instruments = Array.from({ length: 6 }, (_, i) => `http://sim-${i}.example|`);
    const streams = instruments.map((i) => {
      const k = keys.instrument(i);
      return { stream: k.audit, head: k.auditHead, checkpoint: k.auditCheckpoint };
    });
    const writes: Promise<AuditRecord>[] = [];
    streams.forEach((s, n) => {
      const logs = clients.map(
        (redis) => new RedisAuditLog({ redis: redis as unknown as AuditRedis, keys: s, instrument: instruments[n], key: KEY }),
      );
      for (let a = 0; a < 20; a++) {
        for (const f of actionFields(a)) writes.push(logs[a % 2].append({ ...f, instrument: instruments[n] }));
      }
    });
    await Promise.all(writes);
    for (const s of streams) {
      const report = verifyStreamChain(s.stream, await readStreamChain(clients[0] as unknown as AuditStreamReader, s), KEY);
      assert.strictEqual(report.ok, true, `${s.stream}: ${report.firstBad?.reason}`);
      assert.strictEqual(report.records, 41);
      assert.strictEqual(report.checkpoint, 'verified');
    }
    const foundOn = new Map<number, string[]>();
    const holding = await Promise.all(
      harness.ports.map(async (port) => {
        const node = new Redis({ host: '127.0.0.1', port });
        const found = await node.keys(`${settings.prefix}:i:*:audit`);
        foundOn.set(port, found);
        node.disconnect();
        return found.length;
      }),
    );
    assert.ok(holding.filter((n) => n > 0).length >= 2, `chains on several masters: ${holding.join('/')}`);

    // lh-audit verify through any one node reads every chain on every master (not only the node's own)
    const dir = tempDir();
    const keyFile = path.join(dir, 'key.txt');
    fs.writeFileSync(keyFile, KEY.toString('utf8'));
    try {
      const cli = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');
      const all = spawnSync(
        process.execPath,
        [cli, 'verify', `redis://127.0.0.1:${harness.ports[0]}?prefix=${settings.prefix}`, '--key-file', keyFile],
        {
          encoding: 'utf8',
        },
      );
      assert.strictEqual(all.status, 0, all.stdout + all.stderr);
      for (const s of streams) assert.ok(all.stdout.includes(`${s.stream}:\nOK: 41 records`), all.stdout);
      // one instrument named, its chain on another master than the node connected to
      const elsewhere = instruments.find((_, n) => !holdsOn(harness.ports[0], streams[n].stream));
      const one = spawnSync(
        process.execPath,
        [
          cli,
          'export',
          `redis://127.0.0.1:${harness.ports[0]}?prefix=${settings.prefix}&instrument=${encodeURIComponent(elsewhere ?? '')}`,
        ],
        { encoding: 'utf8' },
      );
      assert.strictEqual(one.status, 0, one.stderr);
      assert.strictEqual(one.stdout.trim().split('\n').length, 42);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    function holdsOn(port: number, stream: string): boolean {
      return foundOn.get(port)?.includes(stream) ?? false;
    }
  });
});
