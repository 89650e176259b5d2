/**
 * A model-based property of the dsync hold (outcomes held in memory for the next O_DSYNC write): random interleavings
 * of intents (awaited or not), outcomes, fake-clock ticks, event-loop turns, flushes (awaited or not), the chain file
 * deleted, a close and reopen, with files small enough to rotate. Checked after every step against the files on disk:
 * an intent is acknowledged only once heard and in the file; only durable records are heard, each once, in seq order,
 * and the checkpoint names only a record heard; an awaited flush leaves nothing appended before it unheard; no entry is
 * both written and held; close() never waits on the fake clock. At the end the chain verifies, or, after a loss, the
 * reopened chain declares every acknowledged record missing in a gap and nothing else is wrong.
 */
import assert from 'assert';
import fs from 'fs';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import { AuditLog, AuditRecord, chainFile, chainIndexes, LAZY_SYNC_MS } from '../../src/audit';
import {
  actionFields,
  assertLostInGaps,
  bounded,
  chainRecords,
  checkpointSeq,
  KEY,
  readChain,
  tempDir,
  turn,
  verify,
} from './chain-support';

const NAME = 'chain';

type Step = 'intent' | 'intent-nowait' | 'outcome' | 'tick' | 'turn' | 'flush' | 'flush-nowait' | 'delete' | 'reopen';

interface Internals {
  written: { record: AuditRecord }[];
  held: { record: AuditRecord }[];
}

describe('audit file chain, dsync: held outcomes, model-based', function () {
  it('property: intents, outcomes, ticks, turns, flushes, rotations, a lost file and reopens keep the chain and its acknowledgements true', async function () {
    this.timeout(120000);
    const step = fc.constantFrom<Step>(
      'intent',
      'intent',
      'intent-nowait',
      'outcome',
      'outcome',
      'outcome',
      'tick',
      'turn',
      'flush',
      'flush-nowait',
      'delete',
      'reopen',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 50 }), async (plan) => {
        const dir = tempDir();
        const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
        let log: AuditLog | undefined;
        try {
          const heard = new Map<number, string>(); // seq -> hash, of the records heard (durable), in every writer
          const acked = new Map<number, AuditRecord>(); // every append resolved
          const pending: Promise<unknown>[] = [];
          let lost = false; // a chain file was deleted: records heard before may be gone from disk
          let broken = false;
          let lastHeard = -1;
          const start = (): AuditLog => {
            const next = new AuditLog({ dir, name: NAME, instrument: 'i', key: KEY, writeMode: 'dsync', maxFileBytes: 1500 });
            broken = false;
            next.on('record', (r: AuditRecord) => {
              assert.ok(heard.get(r.seq) !== r.hash, `#${r.seq} heard twice`);
              assert.ok(r.seq > lastHeard, `#${r.seq} heard after #${lastHeard}`);
              lastHeard = r.seq;
              heard.set(r.seq, r.hash);
              if (!lost)
                assert.ok(
                  chainRecords(dir, NAME).some((d) => d.hash === r.hash),
                  `#${r.seq} heard and not in a file`,
                );
            });
            next.on('broken', () => (broken = true));
            return next;
          };
          log = start();
          const check = (): void => {
            const cp = checkpointSeq(dir, NAME);
            assert.ok(cp === -1 || heard.has(cp), `the checkpoint names #${cp}, never heard (not durable)`);
            const inner = log as unknown as Internals;
            const held = new Set(inner.held.map((e) => e.record.seq));
            for (const e of inner.written) assert.ok(!held.has(e.record.seq), `#${e.record.seq} both written and held`);
            if (!lost) {
              // no record written twice, none out of order, none skipped
              const seqs = chainRecords(dir, NAME).map((r) => r.seq);
              for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] + 1, `on disk: ${seqs.join(',')}`);
            }
          };
          let next = 0;
          const open: number[] = [];
          for (const s of plan) {
            const current = log;
            if (s === 'intent' || s === 'intent-nowait') {
              const i = next++;
              open.push(i);
              const p = current.append(actionFields(i)[0]).then(
                (r) => {
                  // an intent is acknowledged only once durable: heard, and (no file lost) in the file
                  assert.ok(heard.get(r.seq) === r.hash, `intent #${r.seq} acknowledged before it was heard`);
                  // (in some file: current.path names the file being sealed, which a later append may have moved on)
                  if (!lost)
                    assert.ok(
                      chainRecords(dir, NAME).some((d) => d.hash === r.hash),
                      `intent #${r.seq} acknowledged, not on disk`,
                    );
                  acked.set(r.seq, r);
                },
                () => undefined,
              );
              if (s === 'intent') await bounded(p, 'an intent');
              else pending.push(p);
            } else if (s === 'outcome' && open.length > 0) {
              const p = current.append(actionFields(open.shift() as number)[1], { lazy: true }).then(
                (r) => void acked.set(r.seq, r),
                () => undefined,
              );
              pending.push(p);
            } else if (s === 'tick') clock.tick(Math.ceil(LAZY_SYNC_MS / 2));
            else if (s === 'turn') await turn();
            else if (s === 'flush' || s === 'flush-nowait') {
              const before = (current as unknown as { seq: number }).seq;
              const f = current.flush().then(() => {
                // every record sealed before the flush is durable once it resolves, unless the chain broke
                if (!broken) assert.ok(lastHeard >= before, `flush resolved with #${before} sealed, #${lastHeard} durable`);
              });
              if (s === 'flush') await bounded(f, 'flush');
              else pending.push(f);
            } else if (s === 'delete') {
              const files = chainIndexes(dir, NAME);
              const last = files[files.length - 1];
              if (last !== undefined) {
                fs.unlinkSync(chainFile(dir, NAME, last));
                lost = true;
              }
            } else if (s === 'reopen') {
              await bounded(current.close(), 'close');
              log = start();
            }
            check();
          }
          await bounded(log.close(), 'close');
          await bounded(Promise.all(pending), 'every append settled after close');
          check();
          if (!lost) {
            const report = verify(readChain(dir, NAME));
            assert.strictEqual(report.ok, true, report.firstBad?.reason);
            assert.strictEqual(report.checkpoint, 'verified');
            const present = new Map(chainRecords(dir, NAME).map((r) => [r.seq, r.hash]));
            for (const r of acked.values()) assert.equal(present.get(r.seq), r.hash, `acknowledged #${r.seq} on disk`);
            assert.equal(heard.size, present.size, 'every record on disk heard');
            return;
          }
          // a file was lost: a redeploy, one more action; every durable record missing is in a declared gap
          log = start();
          await log.append(actionFields(next)[0]).catch(() => undefined);
          await bounded(log.close(), 'the last close');
          assertLostInGaps(dir, NAME, heard);
        } finally {
          clock.uninstall();
          await log?.close().catch(() => undefined);
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: Number(process.env.LH_AUDIT_DSYNC_RUNS ?? 150) },
    );
  });
});
