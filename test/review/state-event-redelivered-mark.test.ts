/**
 * Review finding: lh-state's help says an error event msg carries `redelivered: true` "when a new lease holder raises
 * it again", and StateNode reads the lab event's `redelivered`, yet the error watch never set it: the gate's item said
 * why it went out again (msg.redelivered, msg.redeliveryReason on lh-error-poll's output), the lab event did not.
 * Here an earlier holder (an in-process replica) records an error raised and is cut off before it settles that its
 * msg went out; the runtime takes the lease over and raises it again, marked: lh-state's event says so too.
 */
import assert from 'node:assert/strict';

import Redis from 'ioredis';

import { Coordinator } from '../../src/coordination/coordinator';
import type { StoreRedis } from '../../src/coordination/stores';
import { pollNode, stateNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describeWithRedis('review: lh-state’s event of an error raised again says redelivered', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const db = useRedis();
  let old: { coordinator: Coordinator; redis: Redis } | undefined;
  afterEach(async function () {
    await old?.coordinator.close().catch(() => undefined);
    old?.redis.disconnect();
    old = undefined;
  });

  it('a holder cut off before it settled a raised msg: the next holder’s msg and lh-state’s event say redelivered', async function () {
    const prefix = `lh-state-redelivered-${process.pid}`;
    const instrumentKey = `${sim.baseUrl}|`;
    const error = sim.injectPendingError({ title: 'Clot detected', severity: 'Error' });
    const { handled: _handled, ...record } = error as unknown as Msg;

    // the earlier holder: holds the instrument, records the error raised, and is cut off from Redis before settling
    const redis = new Redis(db.harness.url);
    const coordinator = new Coordinator({ redis: redis as unknown as StoreRedis, prefix, leaseMs: 2000, replica: 'old' });
    old = { coordinator, redis };
    const joined = coordinator.join(instrumentKey);
    await until(() => joined.state.role === 'holder', 'the earlier replica holds the instrument', 10000);
    const gate = coordinator.errorGate<Msg>(instrumentKey, 'poll', { keyOf: (_s, r) => String(r.id) });
    const passed: string[] = [];
    await gate.filter([{ source: 'A', record }], [], undefined, (list) => passed.push(list));
    assert.deepEqual(passed, ['raised']);
    redis.disconnect(); // killed with its msg still in its flow

    const server = serverFlow(sim, { withB: false, config: { coordination: 'coord' } });
    await loadFlow(
      [
        { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 2 },
        ...server.nodes,
        pollNode([['raised'], [], []], { listen: false }),
        { id: 'raised', type: 'helper' },
        stateNode([[], ['events']]),
        { id: 'events', type: 'helper' },
      ],
      server.credentials,
    );
    assert.equal((helper.getNode('server') as unknown as { instrumentKey: string }).instrumentKey, instrumentKey);
    const raised: Msg[] = [];
    const events: Msg[] = [];
    helper.getNode('raised').on('input', (m: Msg) => raised.push(m));
    helper.getNode('events').on('input', (m: Msg) => events.push(m.payload as Msg));

    await until(() => raised.length > 0, 'the next holder raises it', 30000);
    assert.equal(raised[0].errorId, error.id);
    assert.equal(raised[0].redelivered, true, 'lh-error-poll’s msg says it went out again');
    assert.equal(raised[0].redeliveryReason, 'holder-stopped');
    await until(() => events.some((e) => e.event === 'raised'), 'lh-state tells it', 10000);
    const told = events.filter((e) => e.event === 'raised');
    assert.equal(told.length, 1, JSON.stringify(told));
    assert.equal(told[0].redelivered, true, `lh-state's event msg: ${JSON.stringify(told[0])}`);
  });
});
