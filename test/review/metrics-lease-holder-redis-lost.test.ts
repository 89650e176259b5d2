/**
 * Review finding (review34, metrics): `lh_coordination_lease_holder` is "1 while this Node-RED holds the instrument's
 * lease". With Redis unreachable the lease cannot be renewed and lapses; the coordination says `lost` and every replica
 * watches on its own. The gauge was set only on a change to holder or standby, so the replica that held the lease
 * kept saying 1 for as long as Redis stayed away (a dashboard summing the holders read 1: all is well), while no
 * Node-RED held anything. It now says 0 once the coordination is lost, 1 again when the lease comes back here; the
 * state document is not told "standby" by it (every replica watches and says what it sees).
 */
import assert from 'node:assert/strict';

import { pollsDone } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describeWithRedis('review: the lease holder gauge while Redis is unreachable', function () {
  this.timeout(60000);
  const sim = useInstrument({ adminServer: true, afterEach: () => restartMemory() });
  const db = useRedis();
  afterEach(() => db.harness.resume());

  async function holderGauge(): Promise<string | undefined> {
    const res = (await helper.request().get('/lh/metrics').expect(200)) as unknown as { text: string };
    return res.text
      .split('\n')
      .find((l) => l.startsWith('lh_coordination_lease_holder{instrument="sim"}'))
      ?.split(' ')
      .at(-1);
  }

  it('says 0 while the coordination is lost, 1 again when the lease is back; the document never says standby', async function () {
    if (db.harness.external) this.skip(); // an external Redis cannot be paused from here
    const prefix = `lh-holder-lost-${process.pid}`;
    const server = serverFlow(sim, { withB: false, config: { coordination: 'coord' } });
    await loadFlow(
      [
        { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 2 },
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
        { id: 'state', type: 'lh-state', server: 'server', rate: '20', machineInterval: '0', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
      ],
      server.credentials,
    );
    const docs: string[] = [];
    helper.getNode('doc').on('input', (m: Msg) => docs.push((m.payload as { connection: { state: string } }).connection.state));
    const role = (): string =>
      (helper.getNode('server') as unknown as { coordination: { state: { role: string } } }).coordination.state.role;
    await until(async () => (await holderGauge()) === '1', 'the lease held here', 20_000);

    db.harness.pause();
    await until(() => role() === 'lost', 'the coordination lost', 20_000);
    await pollsDone(sim, 2); // every replica watches: this one polls on its own
    assert.equal(await holderGauge(), '0', 'no lease is held while Redis is away');
    await until(() => docs.at(-1) === 'online', 'a document of the instrument as this replica sees it', 10_000);
    const during = docs.length;

    db.harness.resume();
    await until(() => role() === 'holder', 'the lease back', 20_000);
    await until(async () => (await holderGauge()) === '1', 'the gauge says 1 again', 10_000);
    assert.ok(!docs.slice(during - 1).includes('standby'), `never standby: ${JSON.stringify(docs)}`);
  });
});
