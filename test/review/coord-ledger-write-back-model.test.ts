/**
 * Review (issue 29, the answer ledger after Redis lost its data), a seeded model test of the write-back over classes of
 * sequences, not one example: three replicas claim, confirm and release answers under a few error ids that the
 * instrument reuses for new errors (a person's or an automatic answer, each naming the error it answers), Redis
 * loses the ledger at random moments, and the replicas write their own claims back in a random order while answers
 * in flight settle before, between and after the write-backs. The model is the ledger as it would be had Redis lost
 * nothing. After every loss, once every replica wrote back: every answer the model refuses is refused (nothing is
 * answered twice) and every answer to the error now under an id that the model lets through goes through (nothing
 * blocked). Real Redis; the replicas' clocks are one counter (the write-back keeps the newest entry by it).
 */
import assert from 'assert';

import { answeredAnother } from '../../src/client/answer-ledger';
import { type ErrorIdentity, fingerprint, identityOf } from '../../src/client/error-identity';
import { CoordinationKeys } from '../../src/coordination/keys';
import { type ClaimedAnswer, SharedLedger, type StoreRedis } from '../../src/coordination/stores';
import { Rng } from '../support/prng';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface Open {
  replica: number;
  id: string;
  settle: { confirm(): Promise<void>; release(): Promise<void> };
  /** the model's entry for this claim (what a settle compares) */
  json: string;
}

describeWithRedis('review: the answer ledger written back after losses, against a model (seeded)', function () {
  const db = useRedis();

  /** Whether a claim for the error `identity` is let through with `entry` there (as Coordinator.answerClaims decides). */
  const letsThrough = (entry: ClaimedAnswer | undefined, identity: ErrorIdentity): boolean =>
    entry === undefined || (entry.outcome === 'answered' && answeredAnother({ ...entry }, identity));

  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}: after each loss and write-back, the ledger decides as if nothing was lost`, async function () {
      this.timeout(60000);
      const rng = new Rng(seed);
      let clock = 1_800_000_000_000;
      const now = (): number => ++clock;
      const keys = new CoordinationKeys(`lh-review-ledger-model-${process.pid}-${seed}`).instrument('inst');
      const redis = db.redis as unknown as StoreRedis;
      const replicas = [0, 1, 2].map((r) => new SharedLedger(redis, keys, 'A', `r${r}`, now));
      const ids = ['1', '2', '3'];
      // the error now under each id (the instrument reuses ids: a new error is a new title and date)
      let errors = 0;
      const current = new Map(ids.map((id) => [id, identityOf({ id, title: `e${++errors}`, date: '2026-01-01T00:00:00Z' })!]));
      const model = new Map<string, string>(); // id -> entry JSON, as Redis would hold it without a loss
      const open: Open[] = [];
      const trail: string[] = [];

      const settle = async (o: Open, how: 'confirm' | 'release'): Promise<void> => {
        open.splice(open.indexOf(o), 1);
        const at = clock + 1; // the time the ledger's confirm will stamp (the next tick of the shared clock)
        await o.settle[how]();
        trail.push(`r${o.replica} ${how} ${o.id}`);
        if (model.get(o.id) !== o.json) return;
        if (how === 'release') model.delete(o.id);
        else model.set(o.id, JSON.stringify({ ...(JSON.parse(o.json) as ClaimedAnswer), outcome: 'answered', at }));
      };

      const check = async (when: string): Promise<void> => {
        for (const id of ids) {
          const identity = current.get(id)!;
          const expected = model.has(id) ? (JSON.parse(model.get(id)!) as ClaimedAnswer) : undefined;
          const actual = await replicas[0].lookup(id);
          const want = letsThrough(expected, identity);
          const got = letsThrough(actual, identity);
          assert.strictEqual(
            got,
            want,
            `seed ${seed} ${when}: id ${id}: the ledger ${got ? 'lets through' : 'refuses'} an answer the model ${want ? 'lets through' : 'refuses'} (ledger ${JSON.stringify(actual)}, model ${JSON.stringify(expected)}; ${trail.slice(-10).join(', ')})`,
          );
        }
      };

      for (let step = 0; step < 90; step++) {
        const roll = rng.next();
        if (roll < 0.1) {
          // the instrument reuses an id for a new error
          const id = ids[rng.below(ids.length)];
          current.set(id, identityOf({ id, title: `e${++errors}`, date: '2026-01-01T00:00:00Z' })!);
          trail.push(`new error under ${id}`);
        } else if (roll < 0.2) {
          // Redis loses the ledger; each replica writes back (random order), answers settling in between
          await db.redis.del(keys.ledger('A'), `${keys.ledger('A')}:order`);
          trail.push('loss');
          for (const r of [0, 1, 2].sort(() => rng.next() - 0.5)) {
            if (open.length > 0 && rng.chance(0.5))
              await settle(open[rng.below(open.length)], rng.chance(0.5) ? 'confirm' : 'release');
            await replicas[r].reseed();
            trail.push(`r${r} writes back`);
          }
          await check(`after loss at step ${step}`);
        } else if (roll < 0.55 && open.length > 0) {
          await settle(open[rng.below(open.length)], rng.chance(0.6) ? 'confirm' : 'release');
        } else {
          const r = rng.below(3);
          const id = ids[rng.below(ids.length)];
          const identity = current.get(id)!;
          const before = model.get(id);
          const claim = await replicas[r].claim(id, 'Retry', {
            identity: fingerprint(identity),
            supersedes: (existing) => existing.outcome === 'answered' && answeredAnother({ ...existing }, identity),
          });
          trail.push(`r${r} claims ${id}: ${claim.ok ? 'ok' : 'refused'}`);
          const modelOk = letsThrough(before ? (JSON.parse(before) as ClaimedAnswer) : undefined, identity);
          assert.strictEqual(claim.ok, modelOk, `seed ${seed} step ${step}: claim of ${id} (${trail.slice(-10).join(', ')})`);
          if (claim.ok) {
            const entry = await replicas[r].lookup(id);
            const json = JSON.stringify(entry);
            model.set(id, json);
            open.push({ replica: r, id, settle: claim, json });
          }
        }
      }
      for (const o of [...open]) await settle(o, 'release');
    });
  }
});
