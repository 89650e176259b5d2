import { randomBytes } from 'crypto';
import { EventEmitter } from 'events';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { publishAuditSync } from '../observe/lab-events';
import { clippedText, shownInLog } from '../observe/whole-characters';
import { chainFile, chainIndexes, checkpointFile, readChainText } from './files';
import { type AuditRecord, type ChainGap, type Checkpoint, checkpointMac, GENESIS, type RecordFields, seal } from './record';

export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
/** The checkpoint file is rewritten in place at this fixed size (space padded). */
const CHECKPOINT_BYTES = 512;
/** Under sustained load the checkpoint is rewritten at least every this many batches. */
const CHECKPOINT_EVERY_BATCHES = 8;
/**
 * A lazy record (an outcome: nothing waits on it before acting) needs no fsync of its own: it becomes durable with the
 * next fsync an intent needs, or this long after it was written at the latest.
 */
export const LAZY_SYNC_MS = 50;

export interface AuditLogOptions {
  dir: string;
  /** The chain's file name prefix (see chainName). */
  name: string;
  instrument: string;
  /** Signs the checkpoint (HMAC-SHA256); without a key the checkpoint is written unsigned. */
  key?: Buffer;
  /** A new file starts once the current one reaches this size; the chain carries across. */
  maxFileBytes?: number;
  /** false: no fsync (tests and the benchmark's comparison only). Default true. */
  fsync?: boolean;
  /**
   * How a batch is made durable (with fsync on): 'datasync' (default) writes on the main thread (into the page cache:
   * microseconds, where a hand-over to libuv's thread pool costs tens on a small VM), then fdatasyncs through the
   * thread pool (one round trip, the event loop goes on meanwhile); 'dsync' opens the file O_DSYNC, so one write
   * through the thread pool returns only once the data is on disk (one round trip); 'sync' writes and fdatasyncs on
   * the main thread (no round trip, but the event loop waits for the disk). In every mode a lazy record (an outcome)
   * waits for the next sync (see append). The checkpoint is written on the main thread in every mode.
   */
  writeMode?: 'datasync' | 'dsync' | 'sync';
  /** The chain is read only once this settles (the previous writer of the same chain closing). */
  after?: Promise<unknown>;
}

interface Entry {
  file: number;
  record: AuditRecord;
  line: string;
  /** made durable by the next fsync another record needs (or LAZY_SYNC_MS later), not by one of its own */
  lazy: boolean;
  resolve: (record: AuditRecord) => void;
  reject: (err: Error) => void;
}

interface Tail {
  /** The chain's last file: where it goes on (in the next file when this one is torn or full). */
  file: number;
  seq: number;
  hash: string;
  size: number;
  /** The file ends in a torn line (a write cut short): nothing more is appended to it. */
  torn: boolean;
  /** the last complete record's time ('' when there is none) */
  at: string;
  /** The file of the last complete record: an earlier one when the last files hold none (see readTail). */
  recordFile: number;
}

/**
 * The last complete record of a chain on disk, or undefined for a new chain. The chain's last files may hold no
 * complete record when a writer was killed while it began one (between creating it and its file record being written
 * whole): an empty last file is gone on in (its file record written into it), a file holding only a torn line stays
 * (evidence) and the chain goes on in the next; the record they go on from is the last one of the file before.
 */
export function readTail(dir: string, name: string): Tail | undefined {
  const indexes = chainIndexes(dir, name);
  const file = indexes[indexes.length - 1];
  if (file === undefined) return undefined;
  let size = 0;
  let torn = false;
  for (let i = indexes.length - 1; i >= 0; i--) {
    const index = indexes[i];
    const text = readChainText(chainFile(dir, name, index));
    const end = text.lastIndexOf('\n');
    if (index === file) {
      size = Buffer.byteLength(text);
      torn = end !== text.length - 1;
    }
    const complete = end < 0 ? '' : text.slice(0, end);
    const last = complete.slice(complete.lastIndexOf('\n') + 1);
    if (last !== '') {
      const record = tailRecord(last);
      if (!record) {
        // the chain cannot be gone on from it (a writer would link to nothing, or take numbers from an edit)
        throw new Error(
          `audit chain ${name}: the last line of ${chainFile(dir, name, index)} is not an audit record (altered, or left so by a crash); verify it (npx lh-audit verify) before writing more`,
        );
      }
      return { file, seq: record.seq, hash: record.hash, size, torn, at: record.at, recordFile: index };
    }
    // no complete record: only a file begun by a writer killed at once (the last one empty, or one holding a torn
    // line only, and the files after it such) can be gone on from; not always right after the file before it (the file
    // that declares a gap is numbered after the checkpoint's file): verify tells a file out of its place
    const begun = (index === file && text === '') || (end < 0 && text !== '');
    if (!begun) {
      throw new Error(
        `audit chain ${name}: file ${index} has no complete record; verify it (npx lh-audit verify) before writing more`,
      );
    }
  }
  // no complete record in any file: a first file begun and cut short (or empty, then written anew)
  if (file === 1 && size === 0) return undefined;
  return { file, seq: -1, hash: GENESIS, size, torn, at: '', recordFile: 0 };
}

/** The record a chain's last line holds, when it holds one a writer can go on from (its seq and hash). */
function tailRecord(line: string): Pick<AuditRecord, 'seq' | 'hash' | 'at'> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { seq, hash, at } = value as Partial<Record<'seq' | 'hash' | 'at', unknown>>;
  if (!isChainPosition(seq, hash)) return undefined;
  return { seq: seq as number, hash: hash as string, at: typeof at === 'string' ? at : '' };
}

/** Whether `seq` and `hash` name a place in a chain (a record's number and its SHA-256), as a record or a checkpoint does. */
function isChainPosition(seq: unknown, hash: unknown): boolean {
  return Number.isSafeInteger(seq) && (seq as number) >= 0 && typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash);
}

/** The checkpoint's seq, hash and file when it is one (its signature is the verifier's business, not the writer's). */
function readCheckpointHead(file: string): Pick<Checkpoint, 'seq' | 'hash' | 'file'> | undefined {
  let text: string;
  try {
    text = readChainText(file);
  } catch {
    return undefined;
  }
  return parseCheckpoint(text);
}

/** The checkpoint in `text`, with its signature if it has one; undefined when it is not a checkpoint. */
function parseCheckpoint(text: string): (Pick<Checkpoint, 'seq' | 'hash' | 'file'> & { mac?: unknown }) | undefined {
  let cp: Partial<Checkpoint>;
  try {
    cp = JSON.parse(text) as Partial<Checkpoint>;
  } catch {
    return undefined;
  }
  const ok = !!cp && isChainPosition(cp.seq, cp.hash) && Number.isSafeInteger(cp.file) && (cp.file as number) >= 1;
  return ok ? { seq: cp.seq as number, hash: cp.hash as string, file: cp.file as number, mac: cp.mac } : undefined;
}

/**
 * What a chain with records found without a usable checkpoint when it is opened says (undefined: the checkpoint is
 * there, or the chain is new). The writer writes a new one and goes on, but what the old one named is lost: records
 * removed from the chain's end with it (or while it was gone) can no longer be told, and once the new one is written
 * `verify` says OK. A person should learn it (the lh-server node logs it, lh-audit shows it).
 */
export function checkpointMissing(tail: Pick<Tail, 'seq'> | undefined, cpPath: string, key?: Buffer): string | undefined {
  if (!tail || tail.seq < 0) return undefined;
  let how: string;
  try {
    const text = readChainText(cpPath);
    const cp = parseCheckpoint(text);
    if (text.trim() === '') how = 'empty (emptied, or never written: a crash before its first write)';
    else if (!cp) how = 'not a checkpoint (altered)';
    // one this writer's key did not sign is one someone without the key may have written over the real one
    else if (key && cp.mac !== checkpointMac(key, cp))
      how = "not signed with this Node-RED's key (written by someone without it, or lhAudit.key changed since)";
    else return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    how = code === 'ENOENT' ? 'missing (deleted while no writer ran)' : `unreadable (${code ?? (err as Error).message})`;
  }
  return (
    `the audit checkpoint ${cpPath} was ${how} when its chain (last record #${tail.seq}) was opened: records removed ` +
    `from the chain's end with it can no longer be told, and a new checkpoint names #${tail.seq} from now on; compare ` +
    `#${tail.seq} with the last seq your lh-audit nodes sent elsewhere (a SIEM)`
  );
}

/**
 * Where a chain reopened goes on, decided from what is on disk: after its last complete record, or, when its
 * checkpoint names a later record that no file holds any more (a file deleted, moved or cut short), after that record
 * in a new file whose file record declares the records missing.
 */
export function resumeAt(
  tail: Tail | undefined,
  checkpoint: Pick<Checkpoint, 'seq' | 'hash' | 'file'> | undefined,
  chainPath: string,
): { gap?: ChainGap; seq: number; hash: string; file: number } | undefined {
  const tailSeq = tail?.seq ?? -1;
  if (!checkpoint || checkpoint.seq <= tailSeq) return undefined;
  // a last file begun and left empty (by a writer killed as it began the file declaring this very gap) is that file
  const begunEmpty = !!tail && tail.size === 0 && tail.recordFile < tail.file && tail.file > checkpoint.file;
  return {
    seq: checkpoint.seq,
    hash: checkpoint.hash,
    file: begunEmpty ? tail.file : Math.max(tail?.file ?? 0, checkpoint.file) + 1,
    gap: {
      after: tail && tail.seq >= 0 ? { seq: tail.seq, hash: tail.hash } : null,
      from: tailSeq + 1,
      to: checkpoint.seq,
      reason:
        `records #${tailSeq + 1} to #${checkpoint.seq} are in none of the chain's files ${chainPath} any more (the ` +
        'checkpoint named them): a chain file was deleted, moved or cut short',
    },
  };
}

/** Thrown when the file the chain writes is no longer the one its path names: nothing more is acknowledged. */
class ChainFileGone extends Error {}

/**
 * An append-only JSON Lines hash chain. Appends are sealed (seq, prev, hash) in the order they are made and written
 * in batches: every append waiting while a write is under way goes into the next write, one fsync for all of them
 * (group commit). An append resolves only after its record is on disk; then the signed checkpoint is updated.
 * A failed write refuses every later append: the chain on disk and in memory must never differ.
 */
export class AuditLog extends EventEmitter {
  private readonly maxFileBytes: number;
  private readonly fsync: boolean;
  private readonly ready: Promise<void>;
  /** `ready` settled without error: an append is sealed and its write started at once, not a microtask later. */
  private opened = false;
  /**
   * Appends made before the log opened, still waiting on `ready`. While any is, a new append waits behind them too:
   * code running between `ready` settling and their turn (a microtask) would otherwise be sealed ahead of them.
   */
  private waitingOnOpen = 0;
  private seq = -1;
  private prev = GENESIS;
  private file = 0;
  /** Bytes of the current file, pending records included. */
  private size = 0;
  private queue: Entry[] = [];
  /** written to the file, not yet durable: they resolve with the next fsync */
  private written: Entry[] = [];
  /**
   * Lazy records of an O_DSYNC file ('dsync'), not written yet: every write to such a file waits for the disk, so they
   * go with the next record that needs one (one disk write per action, as the other modes' one fsync), or once their
   * LAZY_SYNC_MS ran out, or at flush() or close().
   */
  private held: Entry[] = [];
  /** a sync of the lazy records written is due (their LAZY_SYNC_MS ran out, or the log closes) */
  private syncWanted = false;
  private lazyTimer?: NodeJS.Timeout;
  /** the last record made durable, and who waits for a record to be (flush) */
  private durableSeq = -1;
  private durableWaiters: { seq: number; resolve: () => void }[] = [];
  private flushing?: Promise<void>;
  /** The open chain file; `bytes`: its size as this writer made it (what it found, and what it wrote since). */
  private handle?: { file: number; fh: fs.promises.FileHandle; bytes: number };
  /** The last record made durable (and acknowledged): what the checkpoint names when the chain file is lost. */
  private lastDurable?: Pick<Checkpoint, 'seq' | 'hash' | 'file'>;
  /** The checkpoint file, rewritten in place (made again at its path when it is no longer the file named there). */
  private checkpointOut?: { fd: number; close: () => Promise<void>; sized?: boolean };
  private broken?: Error;
  private closed = false;
  private lock?: { path: string; ino: number; owner: string };
  private batchesSinceCheckpoint = 0;
  /**
   * The file of the tail a reopened chain goes on in, and its size then: it is opened without O_CREAT, and must still
   * be that size (deleted or cut short after open() read its tail, it would be made anew or written after the cut,
   * and the next record acknowledged would link to records no file holds, with no gap declared). When the chain goes
   * on in a new file at once (that file full or torn, or a gap declared after it), it is checked the same way once the
   * new file exists.
   */
  private resumedFile?: { file: number; size: number };
  /** Writes go through libuv's thread pool (an O_DSYNC file: each write waits for the disk), else on the main thread. */
  private readonly onThreadPool: boolean;

  constructor(private readonly options: AuditLogOptions) {
    super();
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.fsync = options.fsync !== false;
    this.onThreadPool = this.fsync && options.writeMode === 'dsync';
    this.ready = this.open();
    // before any append's wait on it: appends made while opening are sealed in the order they were made
    this.ready.then(
      () => {
        this.opened = true;
      },
      // told at once, as a chain that breaks later is: not only to the first request refused (its lock held by another
      // Node-RED, its last file not a record, the dir not writable)
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        // a refusal of the chain names it already (its lock, its last file); any other error (EACCES) is given its place
        const what = /^(the )?audit chain /.test(message)
          ? message
          : `the audit chain ${this.path} cannot be opened (${message})`;
        this.emit('broken', new Error(`${what}: nothing is sent to the instrument until it can be`));
      },
    );
  }

  get path(): string {
    return chainFile(this.options.dir, this.options.name, Math.max(1, this.file));
  }

  private async open(): Promise<void> {
    await this.options.after?.catch(() => undefined);
    await fs.promises.mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    this.lock = takeLock(chainFile(this.options.dir, this.options.name, 0).replace(/\.000000\.jsonl$/, '.lock'));
    const tail = readTail(this.options.dir, this.options.name);
    const cpPath = checkpointFile(this.options.dir, this.options.name);
    const chain = chainFile(this.options.dir, this.options.name, 1).replace(/\.000001\.jsonl$/, '.NNNNNN.jsonl');
    const checkpoint = readCheckpointHead(cpPath);
    const missing = checkpointMissing(tail, cpPath, this.options.key);
    const resume = resumeAt(tail, checkpoint, chain);
    await (await fs.promises.open(cpPath, 'a', 0o600)).close();
    // r+, not a: positional writes of an append-mode file go to its end on Linux
    const fh = await fs.promises.open(cpPath, 'r+');
    this.checkpointOut = { fd: fh.fd, close: () => fh.close() };
    if (missing) {
      this.emit('checkpoint-missing', missing);
      // the new checkpoint at once, not with the next record: said once (a start that records nothing would say it
      // again, "empty" then), and verify agrees with what was said from now on
      if (!resume && tail) this.writeCheckpoint({ seq: tail.seq, hash: tail.hash, file: tail.recordFile, at: tail.at });
    }
    if (resume) {
      // the checkpoint names records no file holds: the chain goes on after them, in a new file that says so
      this.seq = resume.seq;
      this.prev = resume.hash;
      // the gap is declared after the tail read: that file must still be there, at that size, once the new file exists
      if (tail) this.resumedFile = { file: tail.file, size: tail.size };
      this.emit('gap', resume.gap);
      this.startFile(resume.file, resume.gap);
      return;
    }
    if (!tail) {
      this.startFile(1);
      return;
    }
    this.seq = tail.seq;
    this.prev = tail.hash;
    this.file = tail.file;
    this.size = tail.size;
    // on disk already: what the checkpoint names should the file be lost before this writer makes a record durable
    if (tail.seq >= 0) this.lastDurable = { seq: tail.seq, hash: tail.hash, file: tail.recordFile };
    this.resumedFile = { file: tail.file, size: tail.size };
    // a torn line stays where it is (evidence of the crash); the chain goes on in a new file
    if (tail.torn || tail.size >= this.maxFileBytes) this.startFile(tail.file + 1);
    // a file begun by a writer killed before it wrote anything into it: the chain goes on in it, from its file record
    else if (tail.recordFile !== tail.file) this.startFile(tail.file);
  }

  /** Seals the file record that opens file `index` (its prev links to the previous file's last record). */
  private startFile(index: number, gap?: ChainGap): void {
    this.file = index;
    this.size = 0;
    this.enqueue(
      { phase: 'file', at: new Date().toISOString(), instrument: this.options.instrument, file: index, ...(gap ? { gap } : {}) },
      () => undefined,
      () => undefined,
    );
  }

  private enqueue(fields: RecordFields, resolve: Entry['resolve'], reject: Entry['reject'], lazy = false): void {
    const record = seal(fields, this.seq + 1, this.prev);
    const line = `${JSON.stringify(record)}\n`;
    this.seq = record.seq;
    this.prev = record.hash;
    this.size += Buffer.byteLength(line);
    this.queue.push({ file: this.file, record, line, lazy, resolve, reject });
  }

  /**
   * Appends one record; resolves with it once it is durable. `lazy` (an outcome record): it is written at once, in
   * its place in the chain, and made durable by the next fsync another record needs, or LAZY_SYNC_MS later at the
   * latest, or by close() (nobody waits on it before acting: one fsync per action instead of two); its append
   * resolves once it is in the file (an O_DSYNC file's: once held for the next write, see held); the 'record' event and
   * the checkpoint follow only once it is durable.
   */
  append(fields: RecordFields, options: { lazy?: boolean } = {}): Promise<AuditRecord> {
    if (this.opened && this.waitingOnOpen === 0) return this.appendOpen(fields, options.lazy);
    this.waitingOnOpen++;
    return this.ready.then(
      () => {
        this.waitingOnOpen--;
        return this.appendOpen(fields, options.lazy);
      },
      (err: unknown) => {
        this.waitingOnOpen--;
        throw err;
      },
    );
  }

  /**
   * With the log open: seals the record and, when the writer is idle, writes it and starts its fsync before returning
   * (an intent's fsync starts within the request's own call, not after a round of queued work).
   */
  private appendOpen(fields: RecordFields, lazy = false): Promise<AuditRecord> {
    if (this.broken) return Promise.reject(this.broken);
    if (this.closed) return Promise.reject(new Error('the audit trail is closed'));
    if (this.size >= this.maxFileBytes) this.startFile(this.file + 1);
    const done = new Promise<AuditRecord>((resolve, reject) => this.enqueue(fields, resolve, reject, lazy));
    this.kick();
    return done;
  }

  /**
   * Starts the writer unless it runs. An append made after the writer's last look at the queue but before it counted
   * as stopped (its promise settles a few microtasks later) is picked up by the restart here, not left waiting.
   */
  private kick(): void {
    if (this.flushing) return;
    this.flushing = this.flushAll().finally(() => {
      this.flushing = undefined;
      if (!this.broken && (this.queue.length > 0 || (this.syncDue() && this.unsynced()))) this.kick();
    });
  }

  private async flushAll(): Promise<void> {
    while (this.queue.length > 0 || (this.syncDue() && this.unsynced())) {
      const taken = this.queue;
      this.queue = [];
      if (this.onThreadPool && !this.syncDue() && taken.every((entry) => entry.lazy)) {
        // an O_DSYNC file: lazy records wait for the next write (see held); their appends resolve now, as a written
        // lazy record's do in the other modes (nobody waits on them to act; close() writes them at the latest)
        this.held.push(...taken);
        for (const entry of taken) entry.resolve(entry.record);
        this.syncLater();
        continue;
      }
      const batch = this.held.length > 0 ? [...this.held.splice(0), ...taken] : taken;
      let durable: Entry[];
      try {
        // written on the main thread (the usual case) without a wait: the fsync below starts in the same call
        const writing = this.write(batch);
        if (writing) await writing;
        // an O_DSYNC file's write returned once the data was on disk; without fsync, written is all there is; lazy
        // records wait for a sync unless one is due or the log closes (then every batch is synced)
        const onDisk = !this.fsync || this.onThreadPool;
        if (!onDisk && !this.syncDue() && batch.every((entry) => entry.lazy)) {
          // in the file: their appends resolve now (nobody waits on them to act; close() syncs them at the latest, so
          // a close never waits on the timer, which a test's fake clock may hold)
          for (const entry of batch) entry.resolve(entry.record);
          this.syncLater();
          continue;
        }
        this.syncWanted = false;
        if (!onDisk) await this.sync();
        // acknowledged only when in the file the chain's path names (not deleted, moved, cut short or written by another)
        this.checkNamed();
        durable = this.written.splice(0);
      } catch (err) {
        this.fail(err);
        return;
      }
      if (this.lazyTimer) clearTimeout(this.lazyTimer);
      this.lazyTimer = undefined;
      if (durable.length > 0) {
        const last = durable[durable.length - 1];
        this.lastDurable = { seq: last.record.seq, hash: last.record.hash, file: last.file };
        this.durable(last.record.seq);
      }
      // durable: the appends resolve now; the checkpoint follows (it may lag the records, never lead them)
      for (const entry of durable) {
        entry.resolve(entry.record);
        this.emit('record', entry.record);
      }
      // under load the next batch is already waiting: the checkpoint moves on at every 8th batch, or when idle
      this.batchesSinceCheckpoint++;
      if (this.queue.length > 0 && this.batchesSinceCheckpoint < CHECKPOINT_EVERY_BATCHES) continue;
      this.batchesSinceCheckpoint = 0;
      const last = durable[durable.length - 1];
      if (!last) continue;
      // the appends just resolved go first: a request waiting for its intent is sent before the checkpoint's HMAC and
      // write (a tick's wait, not a timer's: a test's fake clock cannot hold it)
      await new Promise<void>((resolve) => process.nextTick(resolve));
      try {
        this.writeCheckpoint({ seq: last.record.seq, hash: last.record.hash, file: last.file, at: last.record.at });
      } catch (err) {
        this.fail(err);
        return;
      }
    }
  }

  /** Makes every record appended so far durable now (lazy ones too); resolves at once when they are (or writing failed). */
  async flush(): Promise<void> {
    await this.ready.catch(() => undefined);
    const target = this.seq;
    // nothing queued or written-not-synced (a chain reopened from disk included): every record is durable already
    if (this.broken || (this.queue.length === 0 && !this.unsynced())) return;
    const done = new Promise<void>((resolve) => this.durableWaiters.push({ seq: target, resolve }));
    this.syncWanted = true;
    this.kick();
    await done;
  }

  /**
   * A sync is due now: the lazy records' LAZY_SYNC_MS ran out, the log closes, or flush() waits. A flush() is asked by
   * its waiter, not by syncWanted alone: syncWanted is cleared once a batch is synced, and a flush() made while that
   * batch was on its way to the disk (a lazy record queued behind it) would otherwise wait for the timer.
   */
  private syncDue(): boolean {
    return this.syncWanted || this.closed || this.durableWaiters.length > 0;
  }

  /** Records written but not yet synced, or held back to be written with the next sync. */
  private unsynced(): boolean {
    return this.written.length > 0 || this.held.length > 0;
  }

  private durable(seq: number): void {
    this.durableSeq = Math.max(this.durableSeq, seq);
    const waiting = this.durableWaiters;
    this.durableWaiters = waiting.filter((w) => w.seq > this.durableSeq);
    for (const w of waiting) if (w.seq <= this.durableSeq) w.resolve();
  }

  /**
   * Lazy records were written (or held) and nothing else needs an fsync: one follows LAZY_SYNC_MS later, unless one
   * comes first. Records written are in the file already (a process ending keeps them): the timer does not keep the
   * process alive for their sync. Records held are in memory only: it does, so that a process ending without close()
   * (nothing else left to do) still writes them, at most LAZY_SYNC_MS later.
   */
  private syncLater(): void {
    if (this.lazyTimer) return;
    this.lazyTimer = setTimeout(() => {
      this.lazyTimer = undefined;
      this.syncWanted = true;
      this.kick();
    }, LAZY_SYNC_MS);
    if (this.held.length === 0) this.lazyTimer.unref();
  }

  private fail(err: unknown): void {
    const message = (err as Error).message;
    const where = err instanceof ChainFileGone ? '' : ` ${this.path}`;
    this.broken = new Error(
      `the audit chain${where} cannot be written (${message}): nothing more is sent to the instrument until the chain ` +
        'is reopened (a redeploy or a restart of Node-RED)',
    );
    for (const entry of [...this.written.splice(0), ...this.held.splice(0), ...this.queue.splice(0)]) entry.reject(this.broken);
    for (const w of this.durableWaiters.splice(0)) w.resolve(); // nothing more becomes durable: the appends say why
    if (err instanceof ChainFileGone) this.keepLastDurable();
    this.emit('broken', this.broken);
  }

  /**
   * The file written is no longer the one the chain's path names: deleted (its descriptor holds an inode no name
   * leads to), moved away or replaced, cut short, or written by someone else. Cheap (two stat calls per batch).
   */
  private checkNamed(): void {
    const handle = this.handle;
    if (!handle) return;
    const file = chainFile(this.options.dir, this.options.name, handle.file);
    const held = fs.fstatSync(handle.fh.fd);
    let named: fs.Stats | undefined;
    try {
      named = fs.statSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (held.nlink === 0 || !named || named.ino !== held.ino || named.dev !== held.dev) {
      throw new ChainFileGone(
        `the chain file ${file} was deleted, moved or replaced while Node-RED ran: the records written since are in no file`,
      );
    }
    if (held.size !== handle.bytes) throw sizeChanged(file, held.size, handle.bytes);
  }

  /**
   * The chain file is lost: the checkpoint (at its path, made again if it went too) names the last record acknowledged,
   * so that the writer that reopens the chain declares what is missing instead of starting over unnoticed.
   */
  private keepLastDurable(): void {
    const last = this.lastDurable;
    if (!last) return;
    try {
      fs.mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
      const cp: Checkpoint = { ...last, at: new Date().toISOString() };
      fs.writeFileSync(checkpointFile(this.options.dir, this.options.name), checkpointText(cp, this.options.key), {
        mode: 0o600,
      });
    } catch {
      // nothing more can be done here: the refusal says why
    }
  }

  /**
   * Writes the batch, each record in the file it was sealed for; they count as written (not yet durable). Returns
   * nothing when it wrote all of it here, on the main thread, into the open file (no wait); a promise otherwise (a
   * file to open or change to, an O_DSYNC write through the thread pool).
   */
  private write(batch: Entry[]): Promise<void> | undefined {
    this.written.push(...batch);
    const fh = this.handle?.fh;
    const handle = this.handle;
    if (fh && handle && !this.onThreadPool && batch.every((entry) => entry.file === handle.file)) {
      const buf = Buffer.from(batch.map((entry) => entry.line).join(''));
      writeWhole(fh.fd, buf);
      handle.bytes += buf.length;
      return undefined;
    }
    return this.writeSlow(batch);
  }

  private async writeSlow(batch: Entry[]): Promise<void> {
    let i = 0;
    while (i < batch.length) {
      const file = batch[i].file;
      let text = '';
      for (; i < batch.length && batch[i].file === file; i++) text += batch[i].line;
      const fh = await this.handleFor(file);
      const buf = Buffer.from(text);
      // into an O_DSYNC file through the thread pool (it returns once on disk); otherwise into the page cache, here
      if (this.onThreadPool) await writeWholeOnPool(fh, buf);
      else writeWhole(fh.fd, buf);
      if (this.handle) this.handle.bytes += buf.length;
    }
  }

  /** Makes every record written so far durable. */
  private async sync(): Promise<void> {
    if (!this.handle) return;
    const started = performance.now();
    if (this.options.writeMode === 'sync') fs.fdatasyncSync(this.handle.fh.fd);
    else await this.handle.fh.datasync();
    publishAuditSync((performance.now() - started) / 1000); // the metrics' audit sync time
  }

  private async handleFor(file: number): Promise<fs.promises.FileHandle> {
    if (this.handle?.file === file) return this.handle.fh;
    // records written to the file being left and not yet durable are synced first (its handle closes now), and are
    // acknowledged with this batch: the file must still be the one its path names
    if (this.handle && this.written.length > 0 && this.fsync && !this.onThreadPool) await this.sync();
    const resumed = this.resumedFile?.file === file ? this.resumedFile : undefined;
    // a reopened chain whose last file is full or torn goes on in a new file at once: that file is the one left
    const left = resumed ? undefined : this.resumedFile;
    this.resumedFile = undefined;
    const { O_WRONLY, O_CREAT, O_APPEND, O_DSYNC } = fs.constants;
    const dsync = this.onThreadPool ? O_DSYNC : 0;
    const flags = O_WRONLY | O_APPEND | dsync | (resumed ? 0 : O_CREAT);
    const path = chainFile(this.options.dir, this.options.name, file);
    let fh: fs.promises.FileHandle;
    try {
      fh = await fs.promises.open(path, flags, 0o600);
    } catch (err) {
      if (resumed && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new ChainFileGone(`the chain file ${path} was deleted or moved while Node-RED ran: the chain cannot go on in it`);
      }
      throw err;
    }
    let bytes: number;
    try {
      bytes = (await fh.stat()).size;
    } catch (err) {
      await fh.close().catch(() => undefined); // a handle that belongs to nobody would stay open until exit
      if (!resumed) await removeIfEmpty(path); // as below: an empty new chain file would stop the reopen
      throw err;
    }
    // the file left is checked once the new one exists, not before: lost (deleted, moved) while the new one was being
    // opened, the chain's last file on disk gone, the new file's records would link to records no file holds, with no
    // gap declared (a reopened writer reads the new file's tail, which the checkpoint does not go beyond)
    try {
      if (left) checkSize(chainFile(this.options.dir, this.options.name, left.file), left.size);
      else this.checkNamed();
      // a close that fails (EIO) refuses too, and the same way: the new file must not stay behind, empty
      await this.handle?.fh.close();
    } catch (err) {
      await fh.close();
      // nothing written to it yet: an empty chain file would stop the reopen ("no complete record"); without it, the
      // reopened writer goes on from the checkpoint (the last record acknowledged) and declares the gap
      if (bytes === 0) await removeIfEmpty(path);
      throw err;
    }
    this.handle = { file, fh, bytes };
    if (resumed && bytes !== resumed.size) throw sizeChanged(path, bytes, resumed.size);
    return fh;
  }

  /** Rewritten in place after the records it names are on disk, so it never names a record that is not. */
  private writeCheckpoint(cp: Checkpoint): void {
    const held = this.checkpointOut;
    if (!held) return;
    // deleted, moved or replaced (an older copy put back) while the writer ran: written in place, it would go to a file
    // no name leads to, and the chain's end would be vouched for by nothing: made again at its path
    const path = checkpointFile(this.options.dir, this.options.name);
    let fd = held.fd;
    if (!namesHeld(path, fd)) {
      const made = fs.openSync(path, 'w', 0o600);
      fd = made;
      this.checkpointOut = { fd: made, close: async () => fs.closeSync(made) };
      void held.close().catch(() => undefined);
    }
    const buf = Buffer.from(checkpointText(cp, this.options.key));
    // not synced: a checkpoint lost in a crash only lags the records. On the main thread in every mode: a positional
    // write into the page cache costs about 2 µs there, a hand-over to the thread pool 10-16 µs (measured)
    writeWhole(fd, buf, 0);
    // at its first write here: what follows it in a file longer than a checkpoint (altered, or another file put in its
    // place) is cut, else the file would not parse (verify: "not JSON"; every start: "not a checkpoint" again)
    const out = this.checkpointOut;
    if (out && !out.sized) {
      out.sized = true;
      if (fs.fstatSync(fd).size > buf.length) fs.ftruncateSync(fd, buf.length);
    }
  }

  /** Waits for every append made so far, then closes the files. */
  async close(): Promise<void> {
    await this.ready.catch(() => undefined);
    this.closed = true;
    // lazy records written and not yet synced: now
    this.syncWanted = true;
    this.kick();
    while (this.flushing) await this.flushing;
    if (this.lazyTimer) clearTimeout(this.lazyTimer);
    this.lazyTimer = undefined;
    await this.handle?.fh.close();
    this.handle = undefined;
    await this.checkpointOut?.close();
    this.checkpointOut = undefined;
    if (this.lock) releaseLock(this.lock);
    this.lock = undefined;
  }
}

/** Whether `path` still names the file `fd` holds (not deleted, moved away or replaced). */
function namesHeld(path: string, fd: number): boolean {
  const held = fs.fstatSync(fd);
  try {
    const named = fs.statSync(path);
    return held.nlink > 0 && named.ino === held.ino && named.dev === held.dev;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** A chain file left unopened (a reopened chain's full or torn last file) must still be there, at the size it was read. */
function checkSize(path: string, size: number): void {
  let now: number;
  try {
    now = fs.statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new ChainFileGone(`the chain file ${path} was deleted or moved while Node-RED ran: the chain cannot go on from it`);
  }
  if (now !== size) throw sizeChanged(path, now, size);
}

/** A chain file found at another size than this writer left it: cut short, or written by someone else. */
function sizeChanged(path: string, size: number, expected: number): ChainFileGone {
  return new ChainFileGone(
    `the chain file ${path} was ${size < expected ? 'cut short' : 'written by someone else'} while Node-RED ran ` +
      `(${size} bytes, ${expected} expected)`,
  );
}

/** The checkpoint as written: signed when there is a key, space padded to its fixed size. */
function checkpointText(cp: Checkpoint, key: Buffer | undefined): string {
  const signed: Checkpoint = key ? { ...cp, mac: checkpointMac(key, cp) } : cp;
  const text = JSON.stringify(signed);
  return `${text.padEnd(CHECKPOINT_BYTES - 1, ' ')}\n`;
}

/** Writes all of `buf` (at `position`, else at the end of an append-mode file): writeSync may write less than asked. */
function writeWhole(fd: number, buf: Buffer, position?: number): void {
  let done = 0;
  while (done < buf.length) {
    done += tookSome(fs.writeSync(fd, buf, done, buf.length - done, position === undefined ? null : position + done));
  }
}

/** The whole buffer through the thread pool: a write may take less than it was given (a full disk, a signal). */
async function writeWholeOnPool(fh: fs.promises.FileHandle, buf: Buffer): Promise<void> {
  let done = 0;
  while (done < buf.length) done += tookSome((await fh.write(buf, done, buf.length - done)).bytesWritten);
}

/** A chain file this writer made and wrote nothing to, removed (gone already, or unreadable: left as it is). */
async function removeIfEmpty(path: string): Promise<void> {
  try {
    if ((await fs.promises.stat(path)).size === 0) await fs.promises.rm(path, { force: true });
  } catch {
    // nothing to remove, or nothing this writer can tell about it
  }
}

/**
 * The bytes a write took, when it took some: a write that takes none (a file system that answers 0 instead of an
 * error) would be asked again without end, the writer never failing nor finishing (close() waiting on it).
 */
function tookSome(bytes: number): number {
  if (bytes > 0) return bytes;
  throw new Error('the disk took none of a write (0 bytes written)');
}

/** Tells this process from an earlier one that had its pid on this host, in the lock it writes. */
const PROCESS_TOKEN = randomBytes(8).toString('hex');

/**
 * One writer per chain: two processes appending to the same files would interleave two chains. The lock names its
 * process (pid, host and a token of this process); a lock left by a process of this host that is gone (killed) is
 * taken over, one naming this pid included.
 */
function takeLock(file: string): { path: string; ino: number; owner: string } {
  const me = `${process.pid}@${os.hostname()} ${PROCESS_TOKEN}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(file, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (fd !== undefined) {
      try {
        writeWhole(fd, Buffer.from(me));
        const ino = fs.fstatSync(fd).ino;
        fs.closeSync(fd);
        return { path: file, ino, owner: me };
      } catch (err) {
        // made and not written (a full disk): left so, it would name no writer and lock the chain until a person
        // removed it, long after space came back
        try {
          fs.closeSync(fd);
        } catch {
          // closed or not, it goes
        }
        fs.rmSync(file, { force: true });
        throw err;
      }
    }
    const holder = fs.readFileSync(file, 'utf8').trim();
    const [pid, host] = holder.split(' ')[0].split('@');
    // this pid and host but not this process (an earlier lock has no token, or another): a process that had this pid
    // before, gone (a container's Node-RED restarted after a kill has the same host and, most often, the same pid)
    const earlierWithMyPid = Number(pid) === process.pid && host === os.hostname();
    if (holder === me || host !== os.hostname() || (!earlierWithMyPid && isAlive(Number(pid)))) {
      throw new Error(lockRefusal(file, holder, os.hostname()));
    }
    fs.rmSync(file, { force: true });
  }
  throw new Error(`cannot lock the audit chain ${file}`);
}

/**
 * Why a chain's lock is not taken, and what to do. A lock of another host is never taken over: nothing seen from here
 * tells a Node-RED there that is gone from one that is paused (docker pause, a suspended VM, a stalled disk) and
 * writes again when it resumes (a lease renewed by the writer would need every write to check it still holds it, and
 * a file system has no step that checks and writes at once). Only a person knows it is gone: the message says how.
 */
export function lockRefusal(file: string, holder: string, myHost: string): string {
  const chain = file.replace(/\.lock$/, '');
  const remove = `remove the lock file ${file} once no Node-RED writes in ${path.dirname(file)} any more, then redeploy (or restart) this one`;
  const m = /^(\d+)@(\S+)/.exec(holder);
  if (!m) {
    const text = JSON.stringify(fromLockFile(holder, 80));
    return `the audit chain ${chain} is locked by a lock file that names no writer (${text}: cut short by a crash, or altered); ${remove}`;
  }
  const writer = fromLockFile(holder, MAX_LOCK_TEXT);
  if (m[2] !== myHost) {
    return (
      `the audit chain ${chain} is being written by process ${writer}, of the host ${fromLockFile(m[2], MAX_LOCK_TEXT)}, not this one (${myHost}): ` +
      'whether it still runs cannot be told from here; one writer per chain (give each Node-RED its own lhAudit.dir, ' +
      `or use lh-coordination). If that Node-RED is gone (a container recreated under a new host name on the same volume), ${remove}; ` +
      'a container given a fixed host name (docker --hostname, compose hostname:) takes its own lock over at its next start'
    );
  }
  return `the audit chain ${chain} is being written by process ${writer}; one writer per chain (give each Node-RED its own lhAudit.dir)`;
}

/** The longest text of a lock file put in a message (a lock file anyone could have written megabytes into). */
const MAX_LOCK_TEXT = 200;

/**
 * Text read from a lock file as a message may show it: at most `max` whole characters (then "…"), every control or
 * format character and lone surrogate half as U+FFFD, so no line break, escape sequence or bidi override reaches the log.
 */
function fromLockFile(text: string, max: number): string {
  return shownInLog(clippedText(text, max));
}

/** Removes the lock only while it is still this writer's (the same file, naming this process): never another's. */
function releaseLock(lock: { path: string; ino: number; owner: string }): void {
  try {
    if (fs.statSync(lock.path).ino !== lock.ino || fs.readFileSync(lock.path, 'utf8').trim() !== lock.owner) return;
    fs.rmSync(lock.path, { force: true });
  } catch {
    // gone already: nothing to release
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
