/**
 * Review finding (`lh-audit verify` of every chain under a prefix): without `instrument=` the CLI listed the chains by
 * their streams (SCAN `<prefix>:i:{*}:audit`) only. A chain whose stream was deleted (`DEL`, or `UNLINK`, by someone
 * able to write Redis) while its head and signed checkpoint stayed was not listed at all: verify checked the other
 * instruments' chains and exited 0, every record of that instrument gone without a word, though its checkpoint still
 * said how many there were (the same chain named with `instrument=` is TAMPERED). Verify now lists a chain by any of
 * its keys (stream, head, checkpoint), and reads one whose head alone is left (its stream and checkpoint deleted: not
 * read at all before, even named with `instrument=`), which is TAMPERED too. Seeded: how many instruments, which one
 * loses what; real Redis, the built CLI (nodes/audit/cli.js: `node scripts/build.js` first).
 */
import assert from 'assert';
import { spawnSync } from 'child_process';
import path from 'path';

import { RedisAuditLog } from '../../src/audit';
import { CoordinationKeys } from '../../src/coordination/keys';
import { actionFields, KEY } from '../audit/chain-support';
import { Rng } from '../support/prng';
import { describeWithRedis, useRedis } from '../support/redis-server';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');

describeWithRedis('review: lh-audit verify of every chain under a prefix, one chain’s stream deleted', function () {
  this.timeout(30000);
  const db = useRedis();
  const seed = Number(process.env.LH_SEED ?? Date.now() % 100000);
  const cases = Number(process.env.LH_CASES ?? 3);
  let n = 0;

  function lhAudit(...args: string[]): { code: number | null; out: string; err: string } {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30000 });
    return { code: r.status, out: r.stdout, err: r.stderr };
  }

  it(`passes the untouched chains and fails when one lost its stream (seed ${seed}, LH_SEED to replay)`, async function () {
    const rng = new Rng(seed);
    for (let round = 0; round < cases; round++) {
      const prefix = `lh-audit-all-${process.pid}-${++n}`;
      const count = rng.int(1, 3);
      const chains = Array.from({ length: count }, (_, i) => {
        const k = new CoordinationKeys(prefix).instrument(`https://lh-${i}.example|`);
        return { stream: k.audit, head: k.auditHead, checkpoint: k.auditCheckpoint };
      });
      for (const [i, keys] of chains.entries()) {
        const log = new RedisAuditLog({ redis: db.redis, keys, instrument: `https://lh-${i}.example|`, key: KEY });
        const actions = rng.int(1, 3);
        for (let a = 1; a <= actions; a++)
          for (const fields of actionFields(a)) await log.append({ ...fields, instrument: `https://lh-${i}.example|` });
        await log.close();
      }
      const url = `${db.harness.url}?prefix=${prefix}`;
      const intact = lhAudit('verify', url, '--key', KEY.toString('utf8'));
      assert.strictEqual(intact.code, 0, `untouched (seed ${seed} round ${round}): ${intact.out}${intact.err}`);

      const victim = rng.below(count);
      const lost = rng.pick([['stream'], ['stream', 'head'], ['stream', 'checkpoint']] as const);
      await db.redis.del(...lost.map((k) => chains[victim][k]));
      const story = `seed ${seed} round ${round}: ${count} chains, chain ${victim} lost its ${lost.join(' and ')}`;
      const tampered = lhAudit('verify', url, '--key', KEY.toString('utf8'));
      assert.strictEqual(tampered.code, 1, `${story}: ${tampered.out}${tampered.err}`);
      assert.match(tampered.out, new RegExp(`${chains[victim].stream.replace(/[{}]/g, '\\$&')}:\\n.*TAMPERED`), story);
    }
  });
});
