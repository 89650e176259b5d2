/**
 * Review finding (fix75): lh-settings merges software settings (read, merge, write), one at a time per instrument in
 * one Node-RED (its home), but two Node-REDs sharing an instrument through lh-coordination did not wait for each
 * other: merging different settings at once, both read before either wrote, and the second wrote the first's setting
 * back to its old value (a set reported saved was undone). Now a set holds the settings' lock in Redis from its read
 * to its write (src/coordination/apply-locks.ts, reached through the instrument's home as lh-server wires it), and a
 * second set waits for it. Each replica is a home of its own (as a second Node-RED has), over real HTTP against the
 * simulator (with latency, so the reads overlap) and a real Redis.
 *
 * Drawn over the pairs of settings and their new values; seed printed, LH_SEED / LH_CASES replay and extend.
 */
import assert from 'node:assert/strict';

import { type SoftwareSettings } from '../../src/client';
import { homeOf, resetHomes } from '../../src/instrument';
import { setSoftwareSettings } from '../../src/nodes/lh-settings/operations';
import { useClients } from '../support/client-suite';
import { Rng } from '../support/prng';
import { describeWithRedis, useCoordinators, useRedis } from '../support/redis-server';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;
const FIELDS = ['hideKeyboard', 'generateRunReport', 'allowRedWarningOverride', 'defaultAmbientTemperature'] as const;

describeWithRedis('review: software settings merged by two Node-REDs at once (lh-coordination)', function () {
  this.timeout(30000);
  const { sim, make } = useClients();
  const db = useRedis();
  const coordinator = useCoordinators(db);
  let n = 0;
  before(() => console.log(`      seed ${SEED} (LH_SEED=${SEED} to replay), ${CASES} cases`));
  afterEach(() => {
    sim.setFaults({});
    resetHomes();
  });

  /** A value of `field` other than `now`. */
  function otherValue(field: (typeof FIELDS)[number], now: unknown, rng: Rng): boolean | number {
    if (field === 'defaultAmbientTemperature') return (typeof now === 'number' ? now : 20) + rng.int(1, 9);
    return now !== true;
  }

  const rng = new Rng(SEED);
  for (let c = 0; c < CASES; c++) {
    const first = rng.below(FIELDS.length);
    const second = (first + rng.int(1, FIELDS.length - 1)) % FIELDS.length;
    const fields = [FIELDS[first], FIELDS[second]] as const;
    it(`case ${c}: one merges ${fields[0]}, the other ${fields[1]}: both survive`, async function () {
      const prefix = `lh-settings-lock-${process.pid}-${++n}`;
      const a = make();
      const b = make();
      const before = (await a.prep.getSoftwareSettings()) as unknown as Record<string, unknown>;
      await b.prep.getSoftwareSettings(); // both logged in: the merges start together
      const wanted = fields.map((f) => ({ [f]: otherValue(f, before[f], rng) }) as Partial<SoftwareSettings>);
      sim.setFaults({ latencyMs: 150 });
      // each replica a home of its own (another Node-RED), its lh-server's coordination locks in it
      const merges = [a, b].map((client, i) => {
        resetHomes();
        homeOf(client.baseUrl).useApplyLocks(coordinator(`lab-${i}/${i}-abcd`, prefix).applyLocks(`${sim.baseUrl}|`));
        return setSoftwareSettings(client.baseUrl, client.prep, wanted[i], 'merge');
      });
      await Promise.all(merges);
      sim.setFaults({});
      const after = (await a.prep.getSoftwareSettings()) as unknown as Record<string, unknown>;
      assert.deepEqual(
        { ...before, ...wanted[0], ...wanted[1] },
        after,
        `a merge was undone: before ${JSON.stringify(before)}, wanted ${JSON.stringify(wanted)}`,
      );
      const key = `${prefix}`;
      assert.equal((await db.redis.keys(`${key}*settings-lock*`)).length, 0, 'the lock is given back');
    });
  }
});
