/**
 * An lh-error-policy in a real Node-RED runtime with an lh-coordination node (real redis-server), holding the
 * instrument, and a standby replica (an in-process Coordinator under the same prefix) that notified an error while
 * Redis was lost and hands its default over when it falls due (issue 19). The hand-over may land after the default
 * was answered already (by this holder, or by the same policy on a replica that held the instrument before): the
 * holder must neither answer the error a second time nor tell Catch nodes that its own default was "already answered".
 */
import assert from 'node:assert/strict';

import { fingerprint, identityOf } from '../../src/client';
import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { SharedLedger } from '../../src/coordination/stores';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { collect, helper, loadFlow, runtimeSettings, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

interface ServerNode {
  instrumentKey: string;
  coordinator?: Coordinator;
  client?: { prep: { pendingErrors(): Promise<unknown[]> } };
}

describeWithRedis('coordination: a default handed over by a standby after it was answered (issue 19)', function () {
  this.timeout(30000);
  const sim = useInstrument({
    afterEach: () => {
      restartMemory();
    },
  });
  const db = useRedis();
  const standbys: Coordinator[] = [];
  let prefix: string;
  let n = 0;
  beforeEach(function () {
    prefix = `lh-handover-${process.pid}-${++n}`;
  });
  afterEach(async function () {
    for (const c of standbys.splice(0)) await c.close();
  });

  const puts = (id: string): number =>
    sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime' && String((r.body as Msg).id) === id)
      .length;

  /** The runtime replica (holder of the one instrument) with a semi-automatic policy answering Retry after `delay` s. */
  function flow(delay: number, name = '', store = ''): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = serverFlow(sim, { withB: false, config: { coordination: 'coord' } });
    return {
      nodes: [
        { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 3 },
        ...server.nodes,
        {
          id: 'policy',
          type: 'lh-error-policy',
          name,
          store,
          server: 'server',
          rules: [{ source: 'any', minSeverity: '', pattern: '', code: '', mode: 'semi-automatic', answer: 'Retry', delay }],
          wires: [['notify'], ['auto'], ['escalate']],
        },
        { id: 'notify', type: 'helper' },
        { id: 'auto', type: 'helper' },
        { id: 'escalate', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['policy'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      credentials: serverFlow(sim, { withB: false }).credentials,
    };
  }

  async function load(delay: number, role: 'holder' | 'standby' = 'holder'): Promise<ServerNode> {
    const f = flow(delay);
    await loadFlow(f.nodes, f.credentials);
    const node = helper.getNode('server') as unknown as ServerNode;
    if (role === 'holder')
      await until(() => node.coordinator?.held().includes(node.instrumentKey) === true, 'the runtime holds the instrument');
    return node;
  }

  /** A standby replica (sorts after the runtime's name: it never takes the lease while the runtime lives). */
  async function standby(instrumentKey: string): Promise<Coordinator> {
    const c = new Coordinator({ redis: db.redis, prefix, leaseMs: 3000, replica: '~standby' });
    standbys.push(c);
    c.join(instrumentKey);
    await c.round();
    assert.equal(c.held().length, 0);
    return c;
  }

  /** Another replica whose name sorts first takes the instrument over (the runtime gives the lease up to it). */
  async function otherHolds(server: ServerNode): Promise<Coordinator> {
    const holder = new Coordinator({ redis: db.redis, prefix, leaseMs: 3000, replica: '0-holder' });
    standbys.push(holder);
    holder.join(server.instrumentKey);
    await until(
      async () => {
        await holder.round();
        return holder.held().includes(server.instrumentKey) && server.coordinator?.held().length === 0;
      },
      'the other replica holds the instrument',
      10000,
    );
    return holder;
  }

  /** The standby's policy (the same node id) notified `record` while lost; its timer fires: it hands the default over. */
  async function handOver(c: Coordinator, instrumentKey: string, record: Msg): Promise<void> {
    const p = {
      key: String(record.id),
      source: 'A' as const,
      answer: 'Retry',
      deadline: Date.now(),
      rule: 0,
      step: 1,
      instrument: instrumentKey,
      record,
    };
    const defaults = c.defaults<typeof p>(instrumentKey, 'policy');
    await defaults.add(p, { lost: true });
    assert.equal(await defaults.take(p.key, p), 'drop', 'a standby sends nothing itself');
  }

  it('the holder sent its default; the hand-over lands after its poll forgot the answer: no second answer, nothing to Catch', async function () {
    const server = await load(0.2);
    const caught = collect(helper.getNode('caught'));
    const auto = collect(helper.getNode('auto'));
    const record = sim.injectPendingError({ title: 'Clot detected' }) as unknown as Msg;
    const id = String(record.id);
    helper.getNode('policy').receive({ payload: record, source: 'A', event: 'raised', coordination: 'lost' });
    await until(() => auto.length === 1, 'the default answered by the holder');
    assert.equal(puts(id), 1);
    // the holder's poll: the error is gone from the list, so its answer ledger forgets the answer
    await server.client?.prep.pendingErrors();

    const c = await standby(server.instrumentKey);
    await handOver(c, server.instrumentKey, record);
    await new Promise((r) => setTimeout(r, 2500)); // two sweeps of the holder
    assert.deepEqual(
      caught.map((m) => (m.error as Msg).message),
      [],
      'no "already answered" for the policy’s own default',
    );
    assert.equal(puts(id), 1, 'answered once');
    assert.equal(auto.length, 1);
  });

  it('the same policy answered on the replica that held the instrument before; a standby hands its copy over: no answer, nothing to Catch', async function () {
    const server = await load(60);
    const caught = collect(helper.getNode('caught'));
    const record = sim.injectPendingError({ title: 'Clot detected' }) as unknown as Msg;
    const id = String(record.id);
    // the default was answered by this policy on the previous holder (before a failover): the shared ledger has it
    const keys = new CoordinationKeys(prefix).instrument(server.instrumentKey);
    const identity = identityOf(record);
    assert.ok(identity);
    const before = await new SharedLedger(db.redis, keys, 'A', 'old-holder').claim(id, 'Retry', {
      by: 'policy',
      identity: fingerprint(identity),
    });
    assert.ok(before.ok);
    await before.confirm();

    const c = await standby(server.instrumentKey);
    await handOver(c, server.instrumentKey, record);
    await new Promise((r) => setTimeout(r, 2500));
    assert.deepEqual(
      caught.map((m) => (m.error as Msg).message),
      [],
      'no "already answered" for the policy’s own default',
    );
    assert.equal(puts(id), 0, 'the instrument gets no second answer');
  });

  it('the holder escalated its default (the instrument refused it); a hand-over landing afterwards sends nothing', async function () {
    await load(0.2);
    const server = helper.getNode('server') as unknown as ServerNode;
    const auto = collect(helper.getNode('auto'));
    const escalated = collect(helper.getNode('escalate'));
    const record = sim.injectPendingError({ title: 'Clot detected' }) as unknown as Msg;
    const id = String(record.id);
    sim.setFaults({ statusRate: 1, statusCode: 400, methods: ['PUT'] });
    helper.getNode('policy').receive({ payload: record, source: 'A', event: 'raised', coordination: 'lost' });
    await until(() => escalated.length === 1, 'the refused default escalated (a person must act)');
    sim.clearFaults();
    assert.equal(puts(id), 1);

    const c = await standby(server.instrumentKey);
    await handOver(c, server.instrumentKey, record);
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(puts(id), 1, 'no second answer after the escalation');
    assert.equal(auto.length, 0);
  });

  it('an error the holder never raised (a lost replica did) is resolved; that replica hands its default over later: nothing is asked of the instrument', async function () {
    const server = await load(60);
    const caught = collect(helper.getNode('caught'));
    const escalated = collect(helper.getNode('escalate'));
    const record = sim.injectPendingError({ title: 'Clot detected' }) as unknown as Msg;
    const id = String(record.id);
    // the lost replica's catch-up wrote the error as raised: the holder's poll resolves it once it is gone
    sim.resolvePendingError(id);
    helper.getNode('policy').receive({ payload: record, source: 'A', event: 'resolved' });
    sim.clearRequests();

    const c = await standby(server.instrumentKey);
    await handOver(c, server.instrumentKey, record);
    await new Promise((r) => setTimeout(r, 2500));
    assert.deepEqual(
      sim.requests.map((r) => `${r.method} ${r.path}`),
      [],
      'no answer attempted for a resolved error',
    );
    assert.equal(caught.length + escalated.length, 0);
  });

  it('a standby whose policy node is redeployed before the default of an error it notified while lost falls due: the default still reaches the holder', async function () {
    const server = await load(1, 'standby');
    const holder = await otherHolds(server);
    const record = sim.injectPendingError({ title: 'Clot detected' }) as unknown as Msg;
    const id = String(record.id);
    helper.getNode('policy').receive({ payload: record, source: 'A', event: 'raised', coordination: 'lost' });
    await new Promise((r) => setTimeout(r, 100));
    // only the policy node is redeployed (a property changed), before the default falls due
    const f = flow(1, 'renamed');
    await helper.setFlows(f.nodes as never, 'nodes', f.credentials as never);
    await new Promise((r) => setTimeout(r, 2000));
    assert.deepEqual(
      (await holder.defaults<{ key: string; deadline: number }>(server.instrumentKey, 'policy').due(Date.now())).map(
        (d) => d.key,
      ),
      [id],
      "handed over to the holder's schedule (not dropped with the node's instance)",
    );
  });

  it('a standby restarted (its context store kept) before the default of an error it notified while lost falls due: the default still reaches the holder', async function () {
    runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
    try {
      const f = flow(1, '', 'keep');
      await loadFlow(f.nodes, f.credentials);
      await (helper as unknown as { _redNodes: { loadContextsPlugin(): Promise<void> } })._redNodes.loadContextsPlugin();
      await helper.setFlows(f.nodes as never, 'full', f.credentials as never);
      const server = helper.getNode('server') as unknown as ServerNode;
      const holder = await otherHolds(server);
      const record = sim.injectPendingError({ title: 'Clot detected' }) as unknown as Msg;
      const id = String(record.id);
      helper.getNode('policy').receive({ payload: record, source: 'A', event: 'raised', coordination: 'lost' });
      await new Promise((r) => setTimeout(r, 100)); // written to the context store

      // a crash and a restart: the module state (pending books) is gone, the context store keeps what was written
      restartMemory();
      await helper.setFlows(f.nodes as never, 'full', f.credentials as never);
      await new Promise((r) => setTimeout(r, 2000));
      assert.deepEqual(
        (await holder.defaults<{ key: string; deadline: number }>(server.instrumentKey, 'policy').due(Date.now())).map(
          (d) => d.key,
        ),
        [id],
        "handed over to the holder's schedule (not dropped with the process)",
      );
    } finally {
      runtimeSettings({ contextStorage: undefined });
    }
  });
});
