/**
 * Hostile review of 7070ea9 / ed26a1b (a new holder adopts the firmware errors another raised): the lease goes
 * A → B → A. A raised a firmware error; B, holding the instrument, heard its resolution frame and reported it
 * resolved; A, a standby meanwhile (a standby ignores the socket), still holds it open when the lease comes back.
 * The instrument never lists firmware errors, and A's poll counts its open ones as listed: the sweep of A's takeover
 * must not raise again an error the instrument resolved and another replica reported resolved.
 */
import assert from 'assert';

import { credentialsFor, leaseHolder, Replica, useReplicaFleet, watchFlows } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { startSimulator } from '../support/runtime';
import { until } from '../support/until';
import { firmwareFrame } from './firmware-id-reuse.support';

const LEASE_S = 2;

describeWithRedis(
  'review: a firmware error resolved on another replica is not raised again when the lease comes back',
  function () {
    this.timeout(120000);
    const db = useRedis();
    const fleet = useReplicaFleet('fw-back');
    const { sims, replicas } = fleet;

    async function failover(): Promise<string[]> {
      const sim = await startSimulator();
      sims.push(sim);
      const instruments = [{ id: 'i1', baseUrl: sim.baseUrl }];
      const flows = watchFlows({
        redisUrl: db.harness.url,
        prefix: fleet.prefix,
        leaseSeconds: LEASE_S,
        instruments,
        collectorUrl: fleet.collector.url,
        interval: 0.3,
      });
      for (const node of flows) if (node.type === 'lh-error-poll') node.listen = true; // firmware errors, from the socket
      for (const name of ['r1', 'r2']) replicas.push(new Replica(name, flows, credentialsFor(instruments)));
      await Promise.all(replicas.map((r) => r.start()));
      const holder = (): Promise<Replica | undefined> => leaseHolder(db.redis, fleet.prefix, { baseUrl: sim.baseUrl }, replicas);
      // a frame pushed again (every 250 ms) until its msg is seen: a watch hears the socket once its own coordination
      // says it holds the instrument, which can lag the lease in Redis (the same frame again changes nothing)
      let last = 0;
      const pushUntil =
        (text: string, done: () => boolean): (() => boolean) =>
        () => {
          if (done()) return true;
          if (Date.now() - last >= 250) {
            last = Date.now();
            sim.publishRawFrame('errors', text);
          }
          return false;
        };
      const raisedBy = (name: string): number =>
        fleet.collector.events.filter((e) => e.kind === 'raised' && e.id === 'fw-1' && e.replica === name).length;

      await until(
        async () => (await holder()) !== undefined && sim.eventSocketInfo.counts.errors >= 2,
        'a holder, both sockets open',
        15000,
      );
      const a = await holder();
      assert.ok(a);
      const b = replicas.find((r) => r !== a);
      assert.ok(b);
      const raise = firmwareFrame({ id: 'fw-1', title: 'Pressure fault', severity: 'Error', source: 'Firmware' });
      await until(
        pushUntil(raise, () => raisedBy(a.name) === 1),
        'fw-1 raised by the first holder',
        10000,
      );
      await new Promise((r) => setTimeout(r, 1000)); // its claim settled

      a.pause(); // its lease runs out: B takes over, and adopts fw-1
      await until(async () => (await holder()) === b, 'B holds the instrument', 15000);
      await new Promise((r) => setTimeout(r, 1000)); // B's first polls
      const resolve = firmwareFrame({ id: 'fw-1', resolved: true });
      await until(
        pushUntil(resolve, () => fleet.collector.count('resolved', 'fw-1') === 1),
        'fw-1 resolved by B',
        10000,
      );
      await new Promise((r) => setTimeout(r, 1000)); // its claim settled
      a.resume(); // a standby now, that never heard the resolution: it still holds fw-1 open

      await new Promise((r) => setTimeout(r, 1000));
      await b.stop(); // B goes (its lease released): A holds the instrument again
      await until(async () => (await holder()) === a, 'A holds the instrument again', 15000);
      await new Promise((r) => setTimeout(r, 2000)); // several of A's polls
      return fleet.collector.events
        .filter((e) => e.id === 'fw-1')
        .map((e) => `${e.kind} by ${e.replica === a.name ? 'A' : 'B'}${e.redelivered ? ` (${e.redelivered})` : ''}`);
    }

    it('A raises it, B holds the instrument and reports it resolved, A takes over again: no second raised msg', async function () {
      const said = await failover();
      // a new holder sending again a claim its holder had not settled is the documented rule (marked): B may do that
      // under load; what must not happen is A raising it again, marked or not, once B said it resolved
      // raised once (unmarked) by A and resolved by B; a resolved msg A sends again after its pause (frames read late,
      // as a stale holder) is a duplicate of that class, not this finding, and is left to the closing note
      assert.deepEqual(
        said.filter((s) => s.startsWith('raised') && !s.includes('(')),
        ['raised by A'],
        `fw-1 raised once (${JSON.stringify(said)})`,
      );
      assert.ok(said.includes('resolved by B'), `B said it resolved (${JSON.stringify(said)})`);
      const resolvedAt = said.indexOf('resolved by B');
      assert.deepEqual(
        said.slice(resolvedAt + 1).filter((s) => s.startsWith('raised')),
        [],
        `nothing raised after its resolution (${JSON.stringify(said)})`,
      );
    });
  },
);
