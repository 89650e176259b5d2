/**
 * The run watch's shared memory on a real Redis: the holder writes it under its lease, a new holder continues from
 * it, and an old holder that was paused past its lease (it still believes it holds it) can no longer write it.
 */
import assert from 'assert';

import { Coordinator, InstrumentCoordination } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { SHARED_MEMORY_REFRESH_MS, SHARED_MEMORY_TTL_MS } from '../../src/coordination/shared-memory';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';
import { until } from '../support/until';

interface Memo {
  state: string;
}

const parse = (json: string): Memo | undefined => JSON.parse(json) as Memo;

/** The memory as stored: `<fencing token>\n<json>`. */
const storedMemo = (raw: string | null): unknown => JSON.parse(String(raw).slice(String(raw).indexOf('\n') + 1));

describeWithRedis('coordination: run-watch memory in Redis', function () {
  const db = useRedis();
  let n = 0;
  const coordinator = useCoordinators(db);

  /** `c` takes the instrument's lease (after it expired) with a new fencing token, as its round would. */
  async function takeOver(c: Coordinator, inst: InstrumentCoordination, replica: string): Promise<void> {
    await db.redis.del(c.keys.instrument('inst').lease);
    const grant = await c.leases.acquire('inst', replica, 60000);
    assert.ok(grant.token > 0);
    inst.grant = grant;
    inst.validUntil = Date.now() + 30000;
    inst.set({ role: 'holder', holder: replica, token: grant.token });
  }

  it('a new holder continues from the shared memory; the old holder, paused past its lease, cannot overwrite it', async function () {
    const prefix = `lh-memory-${process.pid}-${++n}`;
    const a = coordinator('z', prefix); // sorts last: b's fair share is the one instrument once both are live
    const b = coordinator('b', prefix);
    const instA = a.join('inst');
    await a.round(); // alone: a takes the lease
    b.join('inst');
    assert.equal(instA.state.role, 'holder');
    const memA = a.memory<Memo>('inst', 'run:watch', parse);
    const memB = b.memory<Memo>('inst', 'run:watch', parse);
    assert.deepEqual(await memA.load(), { memory: undefined }, 'nothing shared yet');
    assert.equal(await memA.save({ state: 'Running' }), 'ok');
    assert.equal(await memA.load(), 'local', 'the holder reads once per lease');

    // a is paused: its lease expires in Redis (deleted here, as the expiry would), b takes over
    await db.redis.del(new CoordinationKeys(prefix).instrument('inst').lease);
    await b.round();
    assert.ok(b.held().includes('inst'));
    assert.ok(memB.active);
    assert.deepEqual(await memB.load(), { memory: { state: 'Running' } }, 'the new holder continues from the shared memory');
    assert.equal(await memB.save({ state: 'Paused' }), 'ok');

    // a resumes and still believes it holds the lease (its own clock has not run out): its write is refused
    assert.ok(memA.active, 'a still thinks it holds the instrument');
    assert.equal(await memA.save({ state: 'Aborting' }), 'fenced', 'nothing may be sent');
    assert.deepEqual(await memB.load(), 'local');
    const stored = await db.redis.get(new CoordinationKeys(prefix).instrument('inst').shared('memory:run:watch'));
    assert.deepEqual(storedMemo(stored), { state: 'Paused' }, 'the new holder’s memory stands');
  });

  it('after a Redis outage, a replica that stood by continues from the holder’s memory, not from what it sent while lost', async function () {
    const prefix = `lh-memory-${process.pid}-${++n}`;
    const a = coordinator('z', prefix);
    const b = coordinator('b', prefix);
    const instA = a.join('inst');
    await a.round();
    const instB = b.join('inst');
    // the rounds run by themselves on join (then every 20 s): let b's first one finish before stepping by hand
    await until(() => instB.state.role === 'standby', 'b stands by', 5000);
    const memA = a.memory<Memo>('inst', 'run:watch', parse);
    const memB = b.memory<Memo>('inst', 'run:watch', parse);
    assert.deepEqual(await memA.load(), { memory: undefined });
    assert.equal(await memA.save({ state: 'Running' }), 'ok');

    // Redis unreachable past the lease: both replicas are lost and notify on their own memory (marked)
    for (const inst of [instA, instB]) {
      inst.set({ role: 'lost', reason: 'test' });
      inst.validUntil = 0;
    }
    for (const mem of [memA, memB]) {
      assert.equal(await mem.load(), 'local');
      assert.equal(await mem.save({ state: 'Paused' }), 'lost');
    }

    // Redis is back, the lease expired meanwhile: a takes it again (a new token, as its next round does) and writes
    // back what it sent; b stands by (a run watch on standby reads nothing)
    await takeOver(a, instA, 'z');
    instB.set({ role: 'standby', holder: 'z' });
    assert.equal(await memA.load(), 'local', 'the holder’s own memory went out: it is written back');
    assert.equal(await memA.save({ state: 'Paused' }), 'ok');
    assert.equal(await memA.save({ state: 'Idle' }), 'ok', 'the run goes on under a');

    // much later b takes over: it continues from a's memory (Idle), not from its own of the outage (Paused)
    await db.redis.del(new CoordinationKeys(prefix).instrument('inst').lease);
    await b.round();
    assert.ok(memB.active);
    assert.deepEqual(await memB.load(), { memory: { state: 'Idle' } }, 'the shared memory, not the stale local one');
    assert.equal(await memB.save({ state: 'Idle' }), 'ok');
    const stored = await db.redis.get(new CoordinationKeys(prefix).instrument('inst').shared('memory:run:watch'));
    assert.deepEqual(storedMemo(stored), { state: 'Idle' }, 'a’s memory was not overwritten by b’s stale one');
  });

  it('after a Redis outage, the first holder continues from what it sent while lost, also if it stood by in between', async function () {
    const prefix = `lh-memory-${process.pid}-${++n}`;
    const a = coordinator('z', prefix);
    const b = coordinator('b', prefix);
    const instA = a.join('inst');
    await a.round();
    const instB = b.join('inst');
    await until(() => instB.state.role === 'standby', 'b stands by', 5000);
    const memA = a.memory<Memo>('inst', 'run:watch', parse);
    const memB = b.memory<Memo>('inst', 'run:watch', parse);
    assert.deepEqual(await memA.load(), { memory: undefined });
    assert.equal(await memA.save({ state: 'Loading' }), 'ok');

    // Redis unreachable past the lease: both report Loading>Running on their own memory (marked)
    for (const inst of [instA, instB]) {
      inst.set({ role: 'lost', reason: 'test' });
      inst.validUntil = 0;
    }
    for (const mem of [memA, memB]) {
      assert.equal(await mem.load(), 'local');
      assert.equal(await mem.save({ state: 'Running' }), 'lost');
    }
    // back: b stands by for a round (a is about to take it), then a dies and b takes the instrument first
    instB.set({ role: 'standby', holder: 'z' });
    instA.set({ role: 'standby', holder: 'b' });
    await takeOver(b, instB, 'b');
    assert.equal(await memB.load(), 'local', 'nobody wrote since the outage: its own memory (Running) is what went out');
    assert.equal(await memB.save({ state: 'Running' }), 'ok', 'and it is written back');
    const stored = await db.redis.get(new CoordinationKeys(prefix).instrument('inst').shared('memory:run:watch'));
    assert.deepEqual(storedMemo(stored), { state: 'Running' }, 'Loading>Running is not reported again');
  });

  it('a holder that lost the instrument and got it back continues from what the other holder wrote meanwhile', async function () {
    const prefix = `lh-memory-${process.pid}-${++n}`;
    const a = coordinator('z', prefix);
    const b = coordinator('b', prefix);
    const instA = a.join('inst');
    await a.round();
    const instB = b.join('inst');
    await until(() => instB.state.role === 'standby', 'b stands by', 5000);
    const memA = a.memory<Memo>('inst', 'run:watch', parse);
    const memB = b.memory<Memo>('inst', 'run:watch', parse);
    assert.deepEqual(await memA.load(), { memory: undefined });
    assert.equal(await memA.save({ state: 'Running' }), 'ok');
    instA.set({ role: 'standby', holder: 'b' });
    await takeOver(b, instB, 'b');
    assert.deepEqual(await memB.load(), { memory: { state: 'Running' } });
    assert.equal(await memB.save({ state: 'Paused' }), 'ok');
    instB.set({ role: 'standby', holder: 'z' });
    await takeOver(a, instA, 'z');
    assert.deepEqual(await memA.load(), { memory: { state: 'Paused' } }, 'read again under the new lease, not its own Running');
  });

  it('the memory expires 30 days after its last write (a removed node leaves nothing for ever); an idle holder refreshes it daily', async function () {
    const prefix = `lh-memory-${process.pid}-${++n}`;
    let now = Date.now();
    const a = coordinator('a', prefix, { now: () => now });
    a.join('inst');
    await a.round();
    const mem = a.memory<Memo>('inst', 'run:watch', parse);
    const key = new CoordinationKeys(prefix).instrument('inst').shared('memory:run:watch');
    assert.deepEqual(await mem.load(), { memory: undefined });
    assert.equal(await mem.save({ state: 'Idle' }), 'ok');
    const ttl = await db.redis.pttl(key);
    assert.ok(ttl > SHARED_MEMORY_TTL_MS - 60_000 && ttl <= SHARED_MEMORY_TTL_MS, `kept 30 days (pttl ${ttl})`);

    await db.redis.pexpire(key, 1000 * 3600); // as if written long ago
    now += 3600_000; // an hour later, unchanged: not written again
    await a.round();
    assert.equal(await mem.save({ state: 'Idle' }), 'ok');
    assert.ok((await db.redis.pttl(key)) <= 1000 * 3600, 'an unchanged memory is not rewritten within a day');
    now += SHARED_MEMORY_REFRESH_MS; // a day later, still unchanged (an idle instrument): written again, kept 30 days more
    await a.round();
    assert.equal(await mem.save({ state: 'Idle' }), 'ok');
    assert.ok((await db.redis.pttl(key)) > SHARED_MEMORY_TTL_MS - 60_000, 'refreshed');
  });
});
