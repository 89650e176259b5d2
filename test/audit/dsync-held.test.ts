/**
 * 'dsync' (an O_DSYNC chain file): an all-lazy batch (outcomes) is held in memory and goes into the next write that
 * needs the disk (an intent), or LAZY_SYNC_MS later, or at flush() or close(). Whatever comes in between (a flush
 * during a write, a file rotation, the chain file lost, a close): the held records land in seq order before every later
 * record, only durable records are heard or checkpointed, and flush() and close() never wait on the fake-clock timer.
 */
import assert from 'assert';
import fs from 'fs';

import FakeTimers from '@sinonjs/fake-timers';

import { AuditLog, AuditRecord, chainFile } from '../../src/audit';
import { actionFields, KEY, readChain, tempDir } from './chain-support';

const NAME = 'chain';
const realSetTimeout = setTimeout;
const realClearTimeout = clearTimeout;
const BOUND_MS = 3000;

function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = realSetTimeout(() => reject(new Error(`${what}: not within ${BOUND_MS} ms`)), BOUND_MS);
  });
  return Promise.race([p, late]).finally(() => realClearTimeout(timer));
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function settle(done: () => boolean, what: string): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > BOUND_MS) throw new Error(`${what}: not within ${BOUND_MS} ms`);
    await turn();
  }
}

function records(dir: string): AuditRecord[] {
  return readChain(dir, NAME)
    .files.flatMap((f) => f.text.split('\n'))
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditRecord);
}

/** Holds every chain-record write of a FileHandle (an O_DSYNC write through the thread pool) while armed. */
async function writeGate(dir: string): Promise<{
  arm: () => void;
  release: () => void;
  waiting: () => number;
  writes: () => string[];
  restore: () => void;
}> {
  const probe = await fs.promises.open(`${dir}/probe`, 'w');
  const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> };
  await probe.close();
  fs.rmSync(`${dir}/probe`);
  const original = proto.write;
  let armed = false;
  let held: (() => void)[] = [];
  const writes: string[] = [];
  proto.write = function (this: unknown, ...args: unknown[]) {
    const isRecord = Buffer.isBuffer(args[0]) && args[0].subarray(0, 5).toString() === '{"v":';
    if (isRecord) writes.push((args[0] as Buffer).toString());
    if (!isRecord || !armed) return original.apply(this, args);
    return new Promise<void>((resolve) => held.push(resolve)).then(() => original.apply(this, args));
  };
  return {
    arm: () => (armed = true),
    release: () => {
      armed = false;
      for (const go of held.splice(0)) go();
      held = [];
    },
    waiting: () => held.length,
    writes: () => writes,
    restore: () => (proto.write = original),
  };
}

function open(dir: string, maxFileBytes?: number): AuditLog {
  return new AuditLog({ dir, name: NAME, instrument: 'i', key: KEY, writeMode: 'dsync', maxFileBytes });
}

describe('audit file chain, dsync: outcomes held for the next write', function () {
  let dir: string;
  let clock: FakeTimers.InstalledClock | undefined;
  beforeEach(function () {
    dir = tempDir();
  });
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('flush() made while an intent is on its way to the disk, an outcome queued behind it: resolves without the timer', async function () {
    const gate = await writeGate(dir);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    const log = open(dir);
    try {
      const heard: number[] = [];
      log.on('record', (r: AuditRecord) => heard.push(r.seq));
      const [intent0, outcome0] = actionFields(0);
      await bounded(log.append(intent0), 'the first intent');
      gate.arm();
      const intent1 = log.append(actionFields(1)[0]);
      await settle(() => gate.waiting() > 0, 'the intent write under way');
      const appended = log.append(outcome0, { lazy: true });
      const flushed = log.flush();
      await turn();
      gate.release();
      await bounded(intent1, 'the second intent');
      const outcome = await bounded(appended, 'the outcome');
      await bounded(flushed, 'flush, with the fake clock standing still');
      assert.ok(heard.includes(outcome.seq), 'the outcome durable (heard) once flush resolved');
      assert.ok(
        records(dir).some((r) => r.seq === outcome.seq),
        'the outcome in the file once flush resolved',
      );
    } finally {
      gate.release();
      gate.restore();
      await bounded(log.close(), 'close');
    }
  });

  for (const writeMode of ['datasync', 'sync'] as const) {
    it(`${writeMode}, the same race: flush() made while a batch opens the next file, an outcome queued behind it, resolves without the timer`, async function () {
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
      const log = new AuditLog({ dir, name: NAME, instrument: 'i', key: KEY, writeMode, maxFileBytes: 1200 });
      try {
        const heard: number[] = [];
        log.on('record', (r: AuditRecord) => heard.push(r.seq));
        let i = 0;
        for (; !fs.existsSync(chainFile(dir, NAME, 2)); i++) {
          // the intent whose batch starts file 2 awaits the file's opening: the outcome and the flush come meanwhile
          const intent = log.append(actionFields(i)[0]);
          if (fs.existsSync(chainFile(dir, NAME, 2)) || i > 50) {
            await bounded(intent, 'an intent');
            break;
          }
          const outcome = log.append(actionFields(i)[1], { lazy: true });
          const flushed = log.flush();
          await bounded(intent, 'an intent');
          const record = await bounded(outcome, 'an outcome');
          await bounded(flushed, `flush ${i}, with the fake clock standing still`);
          assert.ok(heard.includes(record.seq), 'the outcome durable (heard) once flush resolved');
        }
        assert.ok(fs.existsSync(chainFile(dir, NAME, 2)), 'rotated');
      } finally {
        await bounded(log.close(), 'close');
      }
    });
  }
});
