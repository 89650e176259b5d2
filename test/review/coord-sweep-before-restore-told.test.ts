/**
 * Review (review29, coordination). The bounded chaos run (seed 249, a machine at load 18) broke invariant (b): the
 * holder raised an error, Redis crashed and came back from a snapshot taken a moment before that raise, and the same
 * holder raised the error again 2.2 s later, unmarked. Its lease came back with the snapshot (the same token: its
 * fenced writes pass), and a sweep of the shared memory was due (a poll that failed on Redis while it was down, a
 * redeploy, a lease that lapsed by the replica's clock and was renewed): the sweep ran before the holder's next round
 * told the loss (the Redis server's new run id, the write sequence gone back), found the error listed and in no
 * replica's memory, and raised it as never sent. Likewise a round that read the new run id and then failed on Redis
 * took the news with it: the next round saw the same run id and no loss. README: "A holder whose lease came back with
 * the snapshot recovers the same way under that lease", "a duplicate always says it may be one".
 *
 * Now a sweep first asks whether Redis lost data since the last round (the run id and the write sequence of the
 * instrument, and a loss a failed round found): if so the holder recovers under its lease before it sweeps (what it
 * knew open is written back, what goes out is marked), and a loss found by a failed round is told by the next one.
 * Real redis-server, restarted on a copy of an older dump.rdb.
 */
import assert from 'assert';

import { Coordinator } from '../../src/coordination/coordinator';
import { GROUP_INSTRUMENTS } from '../../src/coordination/scripts';
import { StoreRedis } from '../../src/coordination/stores';
import { GateNode, holderOf, INSTRUMENT, pollGate, Rec, Sent, startGateNode, unmarked } from '../support/gate-replicas';
import { failingWhen } from '../support/redis-link';
import { describeWithRedis, useOlderDumps } from '../support/redis-server';

/** Redis as the holder reaches it, where the round's next `GROUP_INSTRUMENTS` call fails when `failKnows` is set. */
function failingKnows(redis: StoreRedis): { redis: StoreRedis; failKnows: boolean } {
  const link = { failKnows: false, redis };
  link.redis = failingWhen(redis, (command, args) => {
    if (command !== 'eval' || args[0] !== GROUP_INSTRUMENTS || !link.failKnows) return undefined;
    link.failKnows = false;
    return new Error('connect ECONNRESET (test: Redis dropped the connection)');
  });
  return link;
}

describeWithRedis('review: a sweep before the holder told that Redis came back from a stale snapshot', function () {
  this.timeout(60000);
  const dumps = useOlderDumps();
  let run = 0;
  const coordinators: Coordinator[] = [];
  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close().catch(() => undefined);
  });
  const { snapshot, restartFrom } = dumps;

  /**
   * The holder raised e1, then (after the snapshot) e2; Redis comes back from the snapshot with the holder's lease
   * (60 s, not expired), and `meanwhile` runs before the holder's next poll. Returns what went out.
   */
  async function restoreThenPoll(
    meanwhile: (h: GateNode, listed: Map<string, Rec>, sent: Sent[], old: string) => Promise<void>,
    link?: ReturnType<typeof failingKnows>,
  ): Promise<{ sent: Sent[]; h: GateNode; listed: Map<string, Rec> }> {
    const prefix = `lh-sweep-told-${process.pid}-${++run}`;
    const h = startGateNode((link?.redis ?? dumps.redis) as unknown as StoreRedis, prefix, 'h', coordinators);
    await holderOf([h]);
    const listed = new Map<string, Rec>([['e1', { id: 'e1', title: 'clot' }]]);
    const sent: Sent[] = [];
    await pollGate(h, listed, sent); // the first poll under the lease (its sweep), e1 raised
    await h.coordinator.round();
    const old = await snapshot();
    listed.set('e2', { id: 'e2', title: 'door open' });
    await pollGate(h, listed, sent); // e2 raised after the snapshot
    await h.coordinator.round(); // e2's claim settled
    await meanwhile(h, listed, sent, old);
    await pollGate(h, listed, sent);
    for (let i = 0; i < 2; i++) {
      await h.coordinator.round();
      await pollGate(h, listed, sent);
    }
    assert.deepEqual(h.coordinator.held(), [INSTRUMENT], 'the holder keeps the instrument throughout');
    return { sent, h, listed };
  }

  function expectOnce(sent: Sent[]): void {
    const show = JSON.stringify(sent);
    for (const id of ['e1', 'e2']) {
      assert.equal(unmarked(sent, id).length, 1, `${id} raised once unmarked: ${show}`);
      for (const s of sent.filter((x) => x.kind === 'raised' && x.id === id).slice(1))
        assert.ok(s.redelivered, `a raise sent again says it may be one: ${show}`);
    }
  }

  /** A resolution of e2 (whose record the snapshot lost) still goes out, once. */
  async function resolvesOnce(h: GateNode, listed: Map<string, Rec>, sent: Sent[]): Promise<void> {
    listed.delete('e2');
    await pollGate(h, listed, sent);
    await h.coordinator.round();
    await pollGate(h, listed, sent);
    const resolved = sent.filter((s) => s.kind === 'resolved');
    assert.deepEqual(
      resolved.map((s) => s.id),
      ['e2'],
      JSON.stringify(sent),
    );
  }

  it('a poll failed on Redis while it was down (a sweep due), the next one comes before the round: e2 not raised again unmarked', async function () {
    const { sent, h, listed } = await restoreThenPoll(async (node, list, out, old) => {
      node.link.down = true; // Redis down: the poll with a new error fails on it and passes it marked lost
      list.set('e3', { id: 'e3', title: 'tip missing' });
      await pollGate(node, list, out);
      await restartFrom(old);
      node.link.down = false;
    });
    expectOnce(sent);
    await resolvesOnce(h, listed, sent);
  });

  it('a redeploy of the poll node right after the restore, before the round: e2 not raised again unmarked', async function () {
    const { sent, h, listed } = await restoreThenPoll(async (node, _list, _out, old) => {
      await restartFrom(old);
      node.gate.adopt({ keyOf: (_s: string, r: Rec) => r.id }); // the poll node redeployed: its first poll sweeps
    });
    expectOnce(sent);
    await resolvesOnce(h, listed, sent);
  });

  it('before the sweep, what the restore took is not taken for resolved elsewhere (gone), told by a round or not yet', async function () {
    // `gone` makes the poll node forget the firmware errors it names (another replica reported them resolved): one the
    // restore took would be forgotten while open on the instrument, then resolved by the sweep, its real end unheard
    for (const told of [false, true]) {
      const prefix = `lh-sweep-told-${process.pid}-${++run}`;
      const h = startGateNode(dumps.redis as unknown as StoreRedis, prefix, 'h', coordinators);
      await holderOf([h]);
      const listed = new Map<string, Rec>([['e1', { id: 'e1', title: 'clot' }]]);
      const sent: Sent[] = [];
      await pollGate(h, listed, sent);
      await h.coordinator.round();
      const old = await snapshot();
      listed.set('e2', { id: 'e2', title: 'door open' });
      await pollGate(h, listed, sent);
      await h.coordinator.round();
      await restartFrom(old);
      if (told) await h.coordinator.round(); // the round tells the loss; the gate has not recovered from it yet
      h.gate.adopt({ keyOf: (_s: string, r: Rec) => r.id }); // a redeploy: a sweep due
      const shared = await h.gate.beforeSweep();
      assert.deepEqual(
        shared?.gone.map((g) => g.record.id),
        [],
        `${told ? 'told' : 'not yet told'}: nothing proven resolved elsewhere`,
      );
    }
  });

  it('the round that read the new run id failed on Redis: the next round still tells the loss', async function () {
    const link = failingKnows(dumps.redis as unknown as StoreRedis);
    const { sent, h, listed } = await restoreThenPoll(async (node, _list, _out, old) => {
      await restartFrom(old);
      link.failKnows = true;
      await node.coordinator.round(); // reads the new run id and the write sequence, then fails
      await node.coordinator.round();
      node.gate.adopt({ keyOf: (_s: string, r: Rec) => r.id }); // a sweep due (a redeploy)
    }, link);
    expectOnce(sent);
    await resolvesOnce(h, listed, sent);
  });
});
