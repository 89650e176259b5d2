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
  /** The round join() schedules at once has run (the next is 20 s away): the tests step the rounds by hand. */
  const joined = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

  it('an old holder paused between taking a default and answering is refused; the default goes to the new holder, once', async function () {
    const prefix = `lh-auto-${process.pid}`;
    const old = new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica: 'z' }); // sorts last
    coordinators.push(old);
    const inst = old.join('inst');
    await joined();
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
    await joined();
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

  it('a default of an error notified while Redis was lost: a standby hands it to the holder (sent once), a holder sends it', async function () {
    // Redis came back; one replica took the lease, the other still said "lost" when its poll raised an error and its
    // policy scheduled the default. Its catch-up then told the shared memory the error was raised, so the holder
    // never raises it: without the hand-over nobody would send the default.
    const prefix = `lh-auto-lost-${process.pid}`;
    const holder = new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica: 'b' });
    const standby = new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica: 'z' });
    coordinators.push(holder, standby);
    holder.join('inst');
    await joined();
    await holder.round();
    const standbyInst = standby.join('inst');
    await joined();
    await standby.round();
    assert.ok(holder.held().includes('inst'));
    assert.equal(standbyInst.state.role, 'standby');

    const p: Pending = { key: 'e1', deadline: Date.now(), answer: 'Retry' };
    const standbyDefaults = standby.defaults<Pending>('inst', 'policy');
    await standbyDefaults.add(p, { lost: true });
    assert.equal(await standbyDefaults.take('e1', p), 'drop', 'a standby sends no automatic answer');
    const holderDefaults = holder.defaults<Pending>('inst', 'policy');
    assert.deepEqual(
      (await holderDefaults.due(Date.now())).map((d) => d.key),
      ['e1'],
      "the holder's sweep finds it",
    );
    assert.deepEqual(await holderDefaults.due(Date.now()), [], 'once');

    // the holder's own msg was marked lost too: it sends the default itself, and a standby's hand-over of the same
    // default does not overwrite one already scheduled
    const q: Pending = { key: 'e2', deadline: Date.now(), answer: 'Retry' };
    await holderDefaults.add(q, { lost: true });
    assert.equal(await holderDefaults.take('e2', q), 'send');
    await standbyDefaults.add({ ...q, deadline: Date.now() + 60000 });
    assert.equal(await standbyDefaults.take('e2', q), 'drop');
  });
});
