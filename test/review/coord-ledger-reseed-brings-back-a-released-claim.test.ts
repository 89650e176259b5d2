/**
 * Review finding (issue 29, the answer ledger after Redis lost its data): a replica writes its own claims back when it
 * learns of the loss, one by one (up to 1,000 per instrument and source, a round trip each), from a copy of its claims
 * taken when the write-back starts. An answer settled meanwhile (the instrument refused it: released; or applied:
 * confirmed) finds no entry to settle (Redis lost it) and changes only the replica's own copy; the write-back then
 * puts the entry back as it was when it started: "in flight". A refused answer then blocks every other answer to that
 * error, a person's too ("already answered", in flight on that replica) for 10 minutes, and a confirmed one stays in
 * flight, so a new error under a reused id cannot be answered either. The write-back must write what the replica
 * knows when it writes each entry. Real Redis; the settle is made while the write-back is under way.
 */
import assert from 'assert';

import { CoordinationKeys } from '../../src/coordination/keys';
import { LEDGER_WRITE_BACK } from '../../src/coordination/scripts';
import { type LedgerClaim, SharedLedger, type StoreRedis } from '../../src/coordination/stores';
import { describeWithRedis, useRedis } from '../support/redis-server';

describeWithRedis('review: an answer settled while its claim is written back after a loss', function () {
  const db = useRedis();
  let n = 0;

  /**
   * A ledger of replica `a` whose Redis calls `during` when the write-back of `at` is sent (after the write-back
   * started), and one of replica `b` on the same instrument.
   */
  function ledgers(): {
    a: SharedLedger;
    b: SharedLedger;
    arm: (at: string, during: () => void) => void;
    flush: () => Promise<unknown>;
  } {
    const keys = new CoordinationKeys(`lh-review-reseed-${process.pid}-${++n}`).instrument('inst');
    let hook: { at: string; during: () => void } | undefined;
    const redis = new Proxy(db.redis, {
      get(target, prop, receiver) {
        if (prop !== 'eval') return Reflect.get(target, prop, receiver) as unknown;
        return (script: string, numKeys: number, ...args: (string | number)[]) => {
          if (hook && script === LEDGER_WRITE_BACK && args[numKeys] === hook.at) {
            const { during } = hook;
            hook = undefined;
            during();
          }
          return target.eval(script, numKeys, ...args);
        };
      },
    }) as unknown as StoreRedis;
    return {
      a: new SharedLedger(redis, keys, 'A', 'a'),
      b: new SharedLedger(db.redis as unknown as StoreRedis, keys, 'A', 'b'),
      arm: (at, during) => (hook = { at, during }),
      flush: () => db.redis.del(keys.ledger('A'), `${keys.ledger('A')}:order`),
    };
  }

  for (const settle of ['release', 'confirm'] as const) {
    it(`an answer ${settle === 'release' ? 'the instrument refused' : 'the instrument applied'} while the write-back runs is not put back in flight`, async function () {
      const { a, b, arm, flush } = ledgers();
      const first = await a.claim('e0', 'Retry', { by: 'operator' });
      const answer = await a.claim('e1', 'Retry', { by: 'operator' });
      assert.ok(first.ok && answer.ok);
      await flush(); // Redis loses its data
      let settled: Promise<void> | undefined;
      arm('e0', () => (settled = (answer as Extract<LedgerClaim, { ok: true }>)[settle]()));
      await a.reseed(); // a learned of the loss: its claims go back, e0 first; e1's answer settles meanwhile
      await settled;
      const entry = await a.lookup('e1');
      if (settle === 'release') {
        assert.strictEqual(entry, undefined, `the refused answer is back in the ledger: ${JSON.stringify(entry)}`);
        const person = await b.claim('e1', 'Abort', { by: 'operator' });
        assert.ok(person.ok, 'a person on another replica can answer the error the instrument still shows');
      } else assert.strictEqual(entry?.outcome, 'answered', `the applied answer is kept as ${String(entry?.outcome)}`);
    });
  }
});
