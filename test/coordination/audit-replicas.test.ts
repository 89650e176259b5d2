/**
 * Two real Node-RED processes with the same flows and one Redis (issue 20): requests made through both at once are
 * audited in ONE chain per instrument in the Redis stream: linear, verified with the shared key, one intent and one
 * outcome per request the instrument received, nothing lost; each record is emitted by one lh-audit node only (on
 * the replica that wrote it).
 */
import assert from 'assert';
import fs from 'fs';
import path from 'path';

import { AuditRecord, readStreamChain, verifyStreamChain } from '../../src/audit';
import { CoordinationKeys } from '../../src/coordination/keys';
import { Simulator } from '../../src/simulator';
import { Collector, credentialsFor, FlowNode, Replica, watchFlows } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { startSimulator } from '../support/runtime';
import { until } from '../support/until';

const KEY = 'replicas-share-this-key';

describeWithRedis('audit: two Node-RED processes share one chain per instrument in Redis', function () {
  this.timeout(120_000);
  const db = useRedis();
  let sim: Simulator;
  let collector: Collector;
  const replicas: Replica[] = [];
  const prefix = `lh-audit-ha-${process.pid}`;

  before(async function () {
    sim = await startSimulator();
    collector = new Collector();
    await collector.start();
    const flows: FlowNode[] = [
      ...watchFlows({
        redisUrl: db.harness.url,
        prefix,
        leaseSeconds: 2,
        instruments: [{ id: 'i1', baseUrl: sim.baseUrl }],
        collectorUrl: collector.url,
        interval: 5,
      }),
      { id: 'in', type: 'http in', z: 'tab', url: '/clear', method: 'post', wires: [['clear']] },
      { id: 'clear', type: 'lh-clear-errors', z: 'tab', server: 'server-i1', wires: [['res']] },
      { id: 'res', type: 'http response', z: 'tab', statusCode: '200' },
      { id: 'audit', type: 'lh-audit', z: 'tab', server: 'server-i1', wires: [['to-audit']] },
      {
        id: 'to-audit',
        type: 'function',
        z: 'tab',
        func: `msg.payload = { kind: 'audit', id: msg.payload.phase + ':' + (msg.payload.id || msg.payload.seq), replica: env.get('LH_REPLICA') }; msg.headers = { 'content-type': 'application/json' }; return msg;`,
        outputs: 1,
        wires: [['post']],
      },
    ];
    for (const name of ['r1', 'r2']) {
      replicas.push(new Replica(name, flows, credentialsFor([{ id: 'i1' }]), { lhAudit: { key: KEY } }));
    }
    await Promise.all(replicas.map((r) => r.start()));
  });
  after(async function () {
    for (const r of replicas.splice(0)) await r.destroy();
    await collector?.stop();
    await sim?.stop();
  });

  it('requests through both replicas at once: one linear chain, verified, one intent and one outcome per request, each emitted once', async function () {
    const perReplica = 25;
    const posts = replicas.flatMap((r) =>
      Array.from({ length: perReplica }, () =>
        fetch(`http://127.0.0.1:${r.httpPort}/clear`, {
          method: 'POST',
          body: '{}',
          headers: { 'content-type': 'application/json' },
        }),
      ),
    );
    const answers = await Promise.all(posts);
    assert.deepStrictEqual(
      answers.map((a) => a.status),
      Array(2 * perReplica).fill(200),
      replicas.map((r) => r.log.slice(-2000)).join('\n'),
    );
    const sent = sim.requests.filter((r) => r.path === '/api/v1/errors/clear-errors').length;
    assert.strictEqual(sent, 2 * perReplica);

    const keys = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`);
    const stream = { stream: keys.audit, head: keys.auditHead, checkpoint: keys.auditCheckpoint };
    // outcomes are written after the answer: wait until every one is there
    let records: AuditRecord[] = [];
    await until(async () => {
      const chain = await readStreamChain(db.redis, stream);
      records = chain.text
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as AuditRecord);
      return records.filter((r) => r.phase === 'outcome').length >= sent;
    }, 'every outcome in the stream');
    const report = verifyStreamChain(keys.audit, await readStreamChain(db.redis, stream), Buffer.from(KEY));
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
    assert.strictEqual(report.checkpoint, 'verified');
    assert.deepStrictEqual(report.openIntents, []);
    const intents = records.filter((r) => r.phase === 'intent');
    assert.strictEqual(intents.length, sent, 'one intent per request the instrument received');
    assert.strictEqual(records.filter((r) => r.phase === 'file').length, 1, 'one chain, opened once');

    // no replica kept a file chain of its own
    for (const r of replicas) {
      const dir = path.join(r.userDir, 'lh-audit');
      const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')) : [];
      assert.deepStrictEqual(files, [], `${r.name} wrote no file chain`);
    }

    // every record emitted once, by the replica that wrote it: both replicas wrote some
    await until(() => collector.events.filter((e) => e.kind === 'audit').length >= 2 * sent + 1, 'every record emitted');
    const opened = collector.events.filter((e) => e.kind === 'audit' && String(e.id).startsWith('file:'));
    assert.strictEqual(opened.length, 1, 'the file record that opened the chain, by the replica that wrote it');
    const emitted = collector.events.filter((e) => e.kind === 'audit' && !String(e.id).startsWith('file:'));
    assert.strictEqual(emitted.length, 2 * sent);
    assert.strictEqual(new Set(emitted.map((e) => e.id)).size, 2 * sent, 'no record emitted twice');
    assert.deepStrictEqual([...new Set(emitted.map((e) => e.replica))].sort(), ['r1', 'r2']);
  });
});
