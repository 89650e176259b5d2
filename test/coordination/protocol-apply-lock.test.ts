/**
 * lh-protocol's apply with lh-coordination, in a real Node-RED runtime against the simulator and a real Redis: the
 * lh-server node hands its coordination's apply locks to the instrument's home, and an apply while another Node-RED
 * holds the protocol's lock (its key in Redis) is refused at the Catch node with LH_BUSY, naming the protocol and that
 * Node-RED, before any request to the instrument; once the lock is free the apply goes through and gives it back.
 */
import assert from 'node:assert/strict';

import { CoordinationKeys } from '../../src/coordination/keys';
import { LoggedRequest } from '../../src/simulator';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { collect, helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';

type Msg = Record<string, unknown>;

describeWithRedis('coordination: lh-protocol apply holds the protocol’s lock in Redis', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const db = useRedis();

  const requests = (): LoggedRequest[] => sim.requests.filter((r) => r.api === 'A' && !r.path.startsWith('/api/v1/authenticate'));

  it('refused with LH_BUSY while another Node-RED holds it, nothing sent; applied once it is free', async function () {
    const prefix = `lh-apply-node-${process.pid}`;
    const server = serverFlow(sim, { withB: false, config: { coordination: 'coord' } });
    await loadFlow(
      [
        { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 5 },
        ...server.nodes,
        { id: 'protocol', type: 'lh-protocol', server: 'server', operation: 'msg', protocolId: '', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['protocol'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
    const node = helper.getNode('protocol');
    const run = (msg: Msg): Promise<Msg> => {
      const out = nextMessage(helper.getNode('out'));
      node.receive(msg);
      return out;
    };
    const exported = (await run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
    const desired = { steps: [...exported.steps, { name: 'Close lid', stepType: 'LidStep', disabled: false }] };
    const plan = (await run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg;

    const key = new CoordinationKeys(prefix).instrument(`${sim.baseUrl}|`).applyLock(1);
    await db.redis.set(key, '0123abcd:lab-pc-2/4711-3fa9', 'PX', 30000);
    const before = requests().length;
    const outputs = collect(helper.getNode('out'));
    const caught = nextMessage(helper.getNode('caught'));
    node.receive({ operation: 'apply', plan });
    const failed = await caught;
    const err = failed._error as Msg;
    assert.equal(err.kind, 'busy');
    if (process.env.LH_NODE_RED !== 'node-red-3') assert.equal((failed.error as Msg).code, 'LH_BUSY');
    assert.match(
      String(err.message),
      /^protocol 1 is locked: another Node-RED \(lab-pc-2\/4711-3fa9\) is applying a plan to it: nothing was written/,
    );
    assert.equal(requests().length, before, 'not a request to the instrument');
    assert.equal(outputs.length, 0);

    await db.redis.del(key);
    const applied = await run({ operation: 'apply', plan });
    assert.equal(applied.outcome, 'applied');
    assert.equal(await db.redis.get(key), null, 'given back');
  });
});
