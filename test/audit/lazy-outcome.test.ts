/**
 * Outcome records are lazy (issue 22.6): nobody waits on them before acting, so they need no fsync of their own. They
 * are written at once, in their place in the chain, and become durable with the next fsync an intent needs, or
 * LAZY_SYNC_MS later at the latest (an outcome's append resolves once it is in the file, so no close waits on that
 * timer). Whatever the interleaving: an intent's append resolves only once it is durable, lh-audit hears of a record
 * and the checkpoint names it only once it is durable, and close() leaves nothing unsynced.
 */
import assert from 'assert';
import fs from 'fs';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import { AuditLog, AuditRecord, LAZY_SYNC_MS } from '../../src/audit';
import {
  actionFields,
  bounded,
  checkpointSeq,
  countDatasyncs,
  KEY,
  readChain,
  settle,
  tempDir,
  turn,
  verify,
} from './chain-support';

function fileText(dir: string): string {
  return readChain(dir, 'chain')
    .files.map((f) => f.text)
    .join('');
}

/** The chain verifies, its checkpoint signed and current, with `outcomes` outcome records in its files. */
function assertWhole(dir: string, outcomes: number): void {
  const report = verify(readChain(dir, 'chain'));
  assert.strictEqual(report.ok, true, report.firstBad?.reason);
  assert.strictEqual(report.checkpoint, 'verified');
  assert.equal(
    fileText(dir)
      .split('\n')
      .filter((l) => l.includes('"phase":"outcome"')).length,
    outcomes,
  );
}

describe('audit file chain: lazy outcome records', function () {
  it('an action costs one fdatasync: its outcome is made durable by the next intent’s', async function () {
    const dir = tempDir();
    const syncs = await countDatasyncs(dir);
    try {
      const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY });
      const outcomes: Promise<AuditRecord>[] = [];
      for (let i = 0; i < 20; i++) {
        const [intent, outcome] = actionFields(i);
        await log.append(intent);
        outcomes.push(log.append(outcome, { lazy: true }));
      }
      // 20 intents, the file record shares the first intent's sync; the last outcome is synced by close()
      assert.ok(syncs.count() <= 20, `${syncs.count()} fdatasyncs for 20 actions (two each before)`);
      await log.close();
      assert.equal(syncs.count(), 21, 'one more for the last outcome, at close');
      await Promise.all(outcomes);
      assertWhole(dir, 20);
    } finally {
      syncs.restore();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('dsync (an O_DSYNC file): an action costs one write, its outcome goes with the next intent; the last at close, or LAZY_SYNC_MS later', async function () {
    const dir = tempDir();
    const probe = await fs.promises.open(`${dir}/probe`, 'w');
    const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> };
    await probe.close();
    const original = proto.write;
    const writes: string[] = [];
    proto.write = function (this: unknown, ...args: unknown[]) {
      if (Buffer.isBuffer(args[0]) && args[0].subarray(0, 5).toString() === '{"v":') writes.push(args[0].toString());
      return original.apply(this, args);
    };
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY, writeMode: 'dsync' });
      const heard: number[] = [];
      log.on('record', (r: AuditRecord) => heard.push(r.seq));
      for (let i = 0; i < 20; i++) {
        const [intent, outcome] = actionFields(i);
        await bounded(log.append(intent), 'an intent');
        await bounded(log.append(outcome, { lazy: true }), 'an outcome');
      }
      const lines = (w: string): string[] => w.split('\n').filter((l) => l !== '');
      assert.equal(writes.length, 20, `${writes.length} record writes for 20 actions (two each before)`);
      for (let i = 1; i < 20; i++) {
        const phases = lines(writes[i]).map((l) => (JSON.parse(l) as AuditRecord).phase);
        assert.deepEqual(phases, ['outcome', 'intent'], `write ${i}: the last outcome, then the intent`);
      }
      const last = heard[heard.length - 1];
      clock.tick(LAZY_SYNC_MS);
      await settle(() => heard[heard.length - 1] === last + 1, 'the last outcome written LAZY_SYNC_MS later');
      assert.equal(writes.length, 21);
      await bounded(log.close(), 'close');
      assertWhole(dir, 20);
    } finally {
      clock.uninstall();
      proto.write = original;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an outcome alone: its append resolves once it is in the file; it is durable LAZY_SYNC_MS later, and only then do lh-audit and the checkpoint count it', async function () {
    const dir = tempDir();
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY });
    try {
      const heard: number[] = [];
      log.on('record', (r: AuditRecord) => heard.push(r.seq));
      const [intent, outcome] = actionFields(0);
      const first = await bounded(log.append(intent), 'the intent');
      let resolved = false;
      const lazy = log.append(outcome, { lazy: true }).then((r) => {
        resolved = true;
        return r;
      });
      // its append resolves once it is in the file (a close never waits for the lazy sync's timer)
      await settle(() => resolved, 'the outcome written');
      const record = await lazy;
      assert.ok(fileText(dir).includes(`${JSON.stringify(record)}\n`), 'written at once, in its place in the chain');
      assert.deepEqual(heard, [0, first.seq], 'lh-audit hears only of durable records');
      assert.equal(checkpointSeq(dir, 'chain'), first.seq, 'the checkpoint names the last durable record');
      clock.tick(LAZY_SYNC_MS - 1);
      for (let i = 0; i < 50; i++) await turn();
      assert.deepEqual(heard, [0, first.seq], 'not synced before LAZY_SYNC_MS');
      clock.tick(1);
      await settle(() => heard.length >= 3, 'the outcome synced');
      assert.deepEqual(heard, [0, first.seq, record.seq], 'synced LAZY_SYNC_MS after it was written');
      // the checkpoint follows the records it names (written after they are durable)
      await settle(() => checkpointSeq(dir, 'chain') === record.seq, 'the checkpoint naming the outcome');
    } finally {
      clock.uninstall();
      await bounded(log.close(), 'close');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('flush(): nothing to wait for on a chain reopened from disk; a lazy outcome written since is made durable at once', async function () {
    const dir = tempDir();
    try {
      const first = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY });
      const [intent, outcome] = actionFields(0);
      await first.append(intent);
      await first.append(outcome, { lazy: true });
      await bounded(first.close(), 'close');
      // a restart: the next writer continues the chain; a client closing before any new record must not wait
      const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY });
      try {
        await bounded(log.flush(), 'flush of a reopened chain');
        const heard: number[] = [];
        log.on('record', (r: AuditRecord) => heard.push(r.seq));
        const [intent2, outcome2] = actionFields(1);
        await log.append(intent2);
        const lazy = await log.append(outcome2, { lazy: true });
        await bounded(log.flush(), 'flush of a lazy outcome');
        assert.ok(heard.includes(lazy.seq), 'durable (heard) once flush resolves');
      } finally {
        await bounded(log.close(), 'close');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('property: whatever the interleaving of intents, outcomes, waits and a close: an intent is acknowledged only once durable, only durable records are heard or checkpointed, and close leaves none behind', async function () {
    type Step = 'intent' | 'intent-nowait' | 'outcome' | 'tick' | 'turn';
    const steps = fc.array(fc.constantFrom<Step>('intent', 'intent-nowait', 'outcome', 'outcome', 'tick', 'turn'), {
      minLength: 1,
      maxLength: 40,
    });
    await fc.assert(
      fc.asyncProperty(
        steps,
        fc.constantFrom<'datasync' | 'sync' | 'dsync'>('datasync', 'sync', 'dsync'),
        async (plan, writeMode) => {
          const dir = tempDir();
          const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
          try {
            const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY, writeMode, maxFileBytes: 4 * 1024 });
            const heard = new Set<number>();
            log.on('record', (r: AuditRecord) => heard.add(r.seq));
            const all: Promise<unknown>[] = [];
            const check = (): void => {
              const text = fileText(dir);
              // every record heard is in a file; the checkpoint never goes past the durable ones
              for (const seq of heard) assert.ok(text.includes(`"seq":${seq},`), `#${seq} heard and in the file`);
              const durable = Math.max(-1, ...heard);
              assert.ok(
                checkpointSeq(dir, 'chain') <= durable,
                `checkpoint ${checkpointSeq(dir, 'chain')} beyond the durable ${durable}`,
              );
            };
            let next = 0;
            const open: number[] = []; // actions whose intent is in the chain and whose outcome is not yet
            for (const step of plan) {
              const [intent] = actionFields(next);
              // an intent's append resolves once it is durable (heard); an outcome's once it is in the file (an O_DSYNC
              // file's is held for the next write instead: in the file after close, which verify below checks)
              const track = (p: Promise<AuditRecord>, lazy = false): Promise<AuditRecord> =>
                p.then((r) => {
                  if (!lazy || writeMode !== 'dsync')
                    assert.ok(fileText(dir).includes(`${JSON.stringify(r)}\n`), `#${r.seq} in the file when acknowledged`);
                  if (!lazy) assert.ok(heard.has(r.seq), `#${r.seq} heard when acknowledged`);
                  return r;
                });
              if (step === 'intent' || step === 'intent-nowait') {
                open.push(next++);
                const appended = track(log.append(intent));
                if (step === 'intent') await bounded(appended, 'an intent');
                else all.push(appended);
              } else if (step === 'outcome' && open.length > 0)
                all.push(track(log.append(actionFields(open.shift() as number)[1], { lazy: true }), true));
              else if (step === 'tick') clock.tick(Math.floor(LAZY_SYNC_MS / 2));
              else await turn();
              check();
            }
            await bounded(log.close(), 'close');
            await bounded(Promise.all(all), 'every append after close');
            check();
            const report = verify(readChain(dir, 'chain'));
            assert.strictEqual(report.ok, true, report.firstBad?.reason);
            assert.strictEqual(report.checkpoint, 'verified', 'the checkpoint names the last record after close');
          } finally {
            clock.uninstall();
            fs.rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: Number(process.env.LH_AUDIT_LAZY_RUNS ?? 100) },
    );
  });
});
