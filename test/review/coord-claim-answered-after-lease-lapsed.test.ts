/**
 * Review (review25, coordination). A holder paused past its lease (SIGSTOP, a long GC or event-loop stall) while a
 * raised claim was on its way to Redis: Redis took the claim under the lease, the answer waited in the socket, and the
 * holder, once resumed, passed the msg unmarked, after the next holder had already sent it again marked
 * (`holder-stopped`, the claim being unsettled). Two msgs for one error, the second unmarked: README "a replica paused
 * past its lease ... sends nothing when it wakes up" and "a duplicate always says it may be one".
 *
 * Now a claim answered after the lease ran out by the replica's clock is not sent by it: the claim stays unsettled,
 * and the next holder sends it (marked); when the same replica keeps its lease (renewed in time, same token), it sends
 * it itself at its next turn, marked, so it is never lost.
 */
import assert from 'node:assert/strict';

import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { StoreRedis } from '../../src/coordination/stores';
import { GateNode, INSTRUMENT, pollGate, Rec, Sent } from '../support/gate-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';

const LEASE_MS = 60000;

/** Redis as a replica reaches it, whose answers can be held back (a paused process: the answer waits in its socket). */
function holdable(redis: StoreRedis): { redis: StoreRedis; hold: boolean; held: (() => void)[] } {
  const link = { hold: false, held: [] as (() => void)[], redis };
  link.redis = new Proxy(redis, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]): Promise<unknown> => {
        const hold = link.hold;
        const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (hold) await new Promise<void>((resolve) => link.held.push(resolve));
        return answer;
      };
    },
  });
  return link;
}

describeWithRedis('review: a raised claim answered after the holder lease lapsed (paused)', function () {
  this.timeout(60000);
  const db = useRedis();
  const started: Coordinator[] = [];
  let run = 0;
  afterEach(async () => {
    for (const c of started.splice(0)) await c.close().catch(() => undefined);
  });

  function node(prefix: string, name: string, clock: { now: number }): GateNode & { link: ReturnType<typeof holdable> } {
    const link = holdable(db.redis as unknown as StoreRedis);
    const coordinator = new Coordinator({ redis: link.redis, prefix, leaseMs: LEASE_MS, replica: name, now: () => clock.now });
    started.push(coordinator);
    coordinator.join(INSTRUMENT);
    const gate = coordinator.errorGate<Rec>(INSTRUMENT, 'poll', { keyOf: (_s: string, r: Rec) => r.id });
    return { coordinator, link: link as never, gate, memory: new Map() };
  }

  async function setUp(): Promise<{ h: ReturnType<typeof node>; hClock: { now: number }; prefix: string; sent: Sent[] }> {
    const prefix = `lh-claim-lapsed-${process.pid}-${++run}`;
    const hClock = { now: Date.now() };
    const h = node(prefix, 'h', hClock);
    await h.coordinator.round();
    assert.deepEqual(h.coordinator.held(), [INSTRUMENT]);
    const sent: Sent[] = [];
    await pollGate(h, new Map(), sent); // its first poll (the sweep)
    return { h, hClock, prefix, sent };
  }

  /** H polls a list with `e`; its raise reaches Redis, the answer is held while its clock passes the lease. */
  async function raiseWhilePaused(
    h: ReturnType<typeof node>,
    hClock: { now: number },
    e: Rec,
    sent: Sent[],
  ): Promise<() => Promise<void>> {
    h.link.hold = true;
    const poll = pollGate(h, new Map([[e.id, e]]), sent);
    await until(() => h.link.held.length > 0, 'the raise answered by Redis, held', 5000);
    h.link.hold = false;
    hClock.now += LEASE_MS + 1000; // paused past its lease
    return async () => {
      for (const release of h.link.held.splice(0)) release();
      await poll;
    };
  }

  it('another replica took over meanwhile: only it sends the error, marked', async function () {
    const { h, hClock, prefix, sent } = await setUp();
    const e = { id: 'e1', title: 'Pressure fault' };
    const resume = await raiseWhilePaused(h, hClock, e, sent);
    // Redis expired the lease meanwhile; B takes it and polls
    await db.redis.del(new CoordinationKeys(prefix).instrument(INSTRUMENT).lease);
    const b = node(prefix, 'b', { now: Date.now() });
    await b.coordinator.round();
    assert.deepEqual(b.coordinator.held(), [INSTRUMENT]);
    await pollGate(b, new Map([[e.id, e]]), sent);
    await resume();
    const raised = sent.filter((s) => s.kind === 'raised' && s.id === e.id);
    assert.deepEqual(raised, [{ kind: 'raised', id: e.id, by: 'b', redelivered: 'holder-stopped' }]);
  });

  it('it kept its lease (renewed in time, same token): it sends the error itself at its next turn, once', async function () {
    const { h, hClock, sent } = await setUp();
    const e = { id: 'e1', title: 'Pressure fault' };
    const resume = await raiseWhilePaused(h, hClock, e, sent);
    await resume();
    assert.deepEqual(
      sent.filter((s) => s.id === e.id),
      [],
      'nothing sent while it cannot prove its lease',
    );
    await h.coordinator.round(); // the lease was still its own in Redis: renewed, the same token
    assert.deepEqual(h.coordinator.held(), [INSTRUMENT]);
    await pollGate(h, new Map([[e.id, e]]), sent);
    await pollGate(h, new Map([[e.id, e]]), sent);
    const raised = sent.filter((s) => s.kind === 'raised' && s.id === e.id);
    assert.deepEqual(raised, [{ kind: 'raised', id: e.id, by: 'h', redelivered: 'holder-stopped' }]);
  });
});
