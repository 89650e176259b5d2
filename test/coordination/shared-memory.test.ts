/**
 * The run watch's shared memory on a real Redis: the holder writes it under its lease, a new holder continues from
 * it, and an old holder that was paused past its lease (it still believes it holds it) can no longer write it.
 */
import assert from 'assert';

import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface Memo {
  state: string;
}

const parse = (json: string): Memo | undefined => JSON.parse(json) as Memo;

describeWithRedis('coordination: run-watch memory in Redis', function () {
  const db = useRedis();
  let n = 0;
  const coordinators: Coordinator[] = [];

  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close();
  });

  function coordinator(replica: string, prefix: string): Coordinator {
    const c = new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica });
    coordinators.push(c);
    return c;
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
    assert.deepEqual(JSON.parse(String(stored)), { state: 'Paused' }, 'the new holder’s memory stands');
  });
});
