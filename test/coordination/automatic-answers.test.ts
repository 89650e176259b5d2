/**
 * Automatic answers (a policy's rule or default) are fenced by the lease like the defaults themselves: a replica that
 * took a default and was then paused past its lease cannot claim the answer once another replica holds the
 * instrument; it gives the default back, and the new holder sends it, once. A person's answer needs no lease.
 */
import assert from 'assert';

import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { FencedError } from '../../src/coordination/leases';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface Pending {
  key: string;
  deadline: number;
  answer: string;
}

describeWithRedis('coordination: automatic answers fenced by the lease', function () {
  const db = useRedis();
  const coordinators: Coordinator[] = [];
  afterEach(async function () {
    for (const c of coordinators.splice(0)) await c.close();
  });

  it('an old holder paused between taking a default and answering is refused; the default goes to the new holder, once', async function () {
    const prefix = `lh-auto-${process.pid}`;
    const old = new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica: 'z' }); // sorts last
    coordinators.push(old);
    const inst = old.join('inst');
    await old.round();
    assert.ok(inst.isHolder);
    const oldDefaults = old.defaults<Pending>('inst', 'policy');
    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    await oldDefaults.add(p);
    assert.equal(await oldDefaults.take('e1'), 'send', 'the holder takes its due default');

    // paused here: its lease runs out (deleted, as the expiry would) and another replica takes the instrument
    await db.redis.del(new CoordinationKeys(prefix).instrument('inst').lease);
    const next = new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica: 'b' });
    coordinators.push(next);
    next.join('inst');
    await next.round();
    assert.ok(next.held().includes('inst'));

    // resumed: it still believes it holds the instrument, but its automatic answer is refused before anything is sent
    assert.ok(inst.isHolder);
    await assert.rejects(
      old.answerClaims('inst').claim('A', 'e1', 'Retry', { by: 'policy', automatic: true }),
      FencedError,
      'no automatic answer from a replica that lost the lease',
    );
    const person = await old.answerClaims('inst').claim('A', 'e2', 'Abort', { by: 'alice' });
    assert.ok(person.ok, 'a person’s answer on any replica needs no lease');

    // the default goes back; the new holder's sweep sends it, once
    assert.equal(await oldDefaults.giveBack(p), true);
    const nextDefaults = next.defaults<Pending>('inst', 'policy');
    assert.deepEqual(
      (await nextDefaults.due(Date.now())).map((d) => d.key),
      ['e1'],
    );
    assert.deepEqual(await nextDefaults.due(Date.now()), [], 'once');
    const claim = await next.answerClaims('inst').claim('A', 'e1', 'Retry', { by: 'policy', automatic: true });
    assert.ok(claim.ok, 'the holder answers it');
  });
});
