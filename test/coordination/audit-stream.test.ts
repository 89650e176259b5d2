/**
 * In a real Node-RED runtime with an lh-coordination node (real redis-server): lh-server writes its instrument's
 * audit chain to the Redis stream the replicas share, not to a file; lh-audit emits the records this Node-RED
 * wrote; and with Redis unreachable the request is not sent, the node fails saying why (Catch).
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import Redis from 'ioredis';

import { AuditRecord, readStreamChain, verifyStreamChain } from '../../src/audit';
import { CoordinationKeys } from '../../src/coordination/keys';
import { tempDir } from '../audit/chain-support';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, freePort, RedisHarness, useRedis } from '../support/redis-server';
import { collect, helper, loadFlow, nextMessage, runtimeSettings, serverFlow, USER } from '../support/runtime';
import { until } from '../support/until';

describeWithRedis('audit in Node-RED with lh-coordination: the chain in the shared Redis stream', function () {
  const sim = useInstrument();
  const db = useRedis();
  let dir: string;
  let prefix: string;
  let n = 0;

  beforeEach(function () {
    dir = tempDir();
    prefix = `lh-audit-rt-${process.pid}-${++n}`;
    runtimeSettings({ lhAudit: { dir, key: 'shared-replica-key' } });
  });
  afterEach(function () {
    runtimeSettings({});
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function load(url: string): Promise<void> {
    const server = serverFlow(sim, { withB: false, config: { coordination: 'coord' } });
    await loadFlow(
      [
        { id: 'coord', type: 'lh-coordination', url, prefix, leaseSeconds: 2 },
        ...server.nodes,
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
        { id: 'audit', type: 'lh-audit', server: 'server', wires: [['records']] },
        { id: 'records', type: 'helper' },
      ],
      server.credentials,
    );
  }

  it('clear errors is recorded in the stream (signed with the shared key), not in a file; lh-audit emits both records', async function () {
    await load(db.harness.url);
    const seen = collect(helper.getNode('records'));
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 1 });
    await out;
    await until(() => seen.length >= 3, 'the chain opened, then two records emitted');
    assert.deepEqual(
      seen.map((m) => m.topic),
      ['file/opened', 'intent/clear-errors', 'outcome/clear-errors'],
    );
    const keys = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`);
    const stream = { stream: keys.audit, head: keys.auditHead, checkpoint: keys.auditCheckpoint };
    const chain = await readStreamChain(db.redis, stream);
    const report = verifyStreamChain(keys.audit, chain, Buffer.from('shared-replica-key'));
    assert.ok(report.ok, report.firstBad?.reason);
    assert.equal(report.checkpoint, 'verified');
    const records = chain.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditRecord);
    assert.deepEqual(
      records.map((r) => r.phase),
      ['file', 'intent', 'outcome'],
    );
    const intent = records[1];
    assert.ok(intent.phase === 'intent' && intent.who.node === 'clear');
    assert.deepEqual(fs.readdirSync(dir), [], 'no file chain beside the stream');
    assert.ok(!chain.text.includes(USER.password), 'no password in the chain');
  });

  it('a request in flight at a redeploy gets its outcome record in the stream before the Redis connection closes', async function () {
    await load(db.harness.url);
    sim.setFaults({ timeoutRate: 1, methods: ['PUT'], timeoutHoldMs: 800 });
    const keys = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`);
    const stream = { stream: keys.audit, head: keys.auditHead, checkpoint: keys.auditCheckpoint };
    const phases = async (): Promise<string[]> =>
      (await readStreamChain(db.redis, stream)).text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as AuditRecord).phase);
    helper.getNode('clear').receive({ payload: 1 });
    await until(async () => (await phases()).includes('intent'), 'the intent in the stream');
    await helper.unload(); // closes lh-server (its client waits for the request) and lh-coordination (its connection)
    assert.deepEqual(await phases(), ['file', 'intent', 'outcome']);
    const report = verifyStreamChain(keys.audit, await readStreamChain(db.redis, stream), Buffer.from('shared-replica-key'));
    assert.ok(report.ok && report.openIntents.length === 0, JSON.stringify(report));
  });

  it('a redeploy while Redis is down, with a request in flight: the stop finishes (bounded), nothing hangs', async function () {
    const down = new RedisHarness();
    await down.start();
    try {
      await load(down.url);
      sim.setFaults({ timeoutRate: 1, methods: ['PUT'], timeoutHoldMs: 1500 });
      const keys = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`);
      const stream = { stream: keys.audit, head: keys.auditHead, checkpoint: keys.auditCheckpoint };
      const probe = new Redis(down.url);
      helper.getNode('clear').receive({ payload: 1 });
      await until(async () => (await readStreamChain(probe, stream)).text.includes('"intent"'), 'the intent in the stream');
      probe.disconnect();
      await down.destroy(); // Redis gone while the request waits for the instrument: its outcome cannot be written
      const started = Date.now();
      await helper.unload();
      // lh-server: close 3 s + audit settle 1 s + a connection wait of 2 s; lh-coordination: its 8 s bound
      assert.ok(Date.now() - started < 12_000, `the stop took ${Date.now() - started} ms`);
    } finally {
      await down.destroy().catch(() => undefined);
    }
  });

  it('Redis unreachable: clear errors is not sent, the node fails saying the audit record could not be written to Redis', async function () {
    await load(`redis://127.0.0.1:${await freePort()}`);
    sim.clearRequests();
    const caught = nextMessage(helper.getNode('caught'));
    const passed = nextMessage(helper.getNode('out')).then(() => undefined);
    helper.getNode('clear').receive({ payload: 1 });
    const msg = await Promise.race([caught, passed]);
    assert.ok(msg, 'clear errors failed (Catch), it did not pass');
    const message = String((msg._error as { message: string }).message);
    assert.match(
      message,
      /clear-errors was not sent: its audit record could not be written \(the audit trail cannot be written to Redis/,
    );
    assert.deepEqual(
      sim.requests.filter((r) => r.method !== 'GET' && !/\/authenticate/.test(r.path)).map((r) => r.path),
      [],
      'nothing reached the instrument',
    );
  });
});
