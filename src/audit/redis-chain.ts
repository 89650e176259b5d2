import { instrumentIdentity } from '../coordination/instrument-identity';
import { sha256Hex } from './canonical';
import { csvRow, parseRecords } from './export';
import { type AuditRecord } from './record';
import { type AuditStreamKeys } from './redis-log';
import { ChainVerifier, failAtCheckpoint, type VerifyInput, type VerifyReport } from './verify';

/** The reads verify and export make of a Redis audit chain. */
export interface AuditStreamReader {
  xrange(key: string, start: string, end: string, count: 'COUNT', n: number): Promise<[string, string[]][]>;
  xrevrange(key: string, end: string, start: string, count: 'COUNT', n: number): Promise<[string, string[]][]>;
  get(key: string): Promise<string | null>;
  /** The type of a key (to name one holding the wrong type), when the connection can ask. */
  type?(key: string): Promise<string>;
  /** A transaction (MULTI/EXEC), when the connection has one: the last entry and the checkpoint read in one step. */
  multi?(): AuditSnapshotTransaction;
}

/** The part of an ioredis transaction a snapshot uses. */
export interface AuditSnapshotTransaction {
  xrevrange(key: string, end: string, start: string, count: 'COUNT', n: number): unknown;
  get(key: string): unknown;
  exec(): Promise<[Error | null, unknown][] | null>;
}

/**
 * The entries verify and export ask Redis for at a time: a chain of millions of records is read page by page and
 * never held whole (a record is about 490 bytes; one with its body, old value and why at their 64 KiB bound about
 * 200 KiB, so a page stays within some 50 MiB even then).
 */
export const STREAM_PAGE = 256;

/** One stream entry as a line of the chain: its `r` field (anything else is not a record, and verify says so). */
function lineOf(fields: string[]): string {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'r') return fields[i + 1].replace(/\n/g, '\\n');
  return 'not an audit record';
}

export interface StreamChain {
  /** The stream's records as JSON Lines (one line per entry, in entry order). */
  text: string;
  /** The entry id of each line. */
  ids: string[];
  checkpoint?: string;
}

/**
 * A chain in Redis as one moment saw it: its last entry and its checkpoint, which every append writes in one step,
 * read in one transaction (MULTI/EXEC); the pages are then read up to that entry, so records appended while they are
 * read are not part of this reading (and the checkpoint is never ahead of the records read). A user not allowed
 * transactions reads the last entry before and after the checkpoint, again (after a short random pause) until both
 * name the same entry.
 */
export interface StreamSnapshot {
  /** The last entry's id; undefined: the stream is empty (or absent). */
  end?: string;
  checkpoint?: string;
}

/**
 * `read`, with a WRONGTYPE refusal (a key of the chain holding another type: someone able to write Redis, a prefix
 * shared by mistake) told as the key and what it holds: Redis' own words name neither.
 */
export async function readKey<T>(
  redis: Pick<AuditStreamReader, 'type'>,
  key: string,
  what: 'a stream' | 'a string',
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof Error) || !/WRONGTYPE/.test(err.message)) throw err;
    const type = redis.type ? await redis.type(key).catch(() => undefined) : undefined;
    throw new Error(
      `the key ${key} holds ${type ? `a ${type}` : 'another type'}, not ${what} as an audit chain's does (WRONGTYPE): it was written by something else`,
    );
  }
}

async function lastEntry(redis: AuditStreamReader, stream: string): Promise<string | undefined> {
  const [last] = await readKey(redis, stream, 'a stream', () => redis.xrevrange(stream, '+', '-', 'COUNT', 1));
  return last?.[0];
}

/** The snapshot in one transaction; undefined when there is none (no multi, or not allowed). */
async function snapshotInOneStep(redis: AuditStreamReader, keys: AuditStreamKeys): Promise<StreamSnapshot | undefined> {
  if (!redis.multi) return undefined;
  let replies: [Error | null, unknown][] | null;
  try {
    const tx = redis.multi();
    tx.xrevrange(keys.stream, '+', '-', 'COUNT', 1);
    tx.get(keys.checkpoint);
    replies = await tx.exec();
  } catch {
    return undefined;
  }
  if (!replies || replies.length !== 2 || replies.some(([err]) => err)) return undefined;
  const last = replies[0][1];
  const checkpoint = replies[1][1];
  const end = Array.isArray(last) && Array.isArray(last[0]) && typeof last[0][0] === 'string' ? last[0][0] : undefined;
  return { end, checkpoint: typeof checkpoint === 'string' ? checkpoint : undefined };
}

export async function streamSnapshot(redis: AuditStreamReader, keys: AuditStreamKeys): Promise<StreamSnapshot> {
  const inOneStep = await snapshotInOneStep(redis, keys);
  if (inOneStep) return inOneStep;
  for (let attempt = 0; ; attempt++) {
    const before = await lastEntry(redis, keys.stream);
    const checkpoint = (await readKey(redis, keys.checkpoint, 'a string', () => redis.get(keys.checkpoint))) ?? undefined;
    const after = await lastEntry(redis, keys.stream);
    // appends without pause all the while: the entry before the checkpoint was read (the checkpoint may then name a
    // later one, reported as records removed from the end: run it again)
    if (before === after || attempt >= 20) return { end: before, checkpoint };
    await new Promise((resolve) => setTimeout(resolve, 1 + Math.floor(Math.random() * 10)));
  }
}

const MAX_SEQ = 2n ** 64n - 1n;

/**
 * The smallest stream entry id after `id` (`<ms>-<seq>`), where the next page starts: XRANGE's exclusive start
 * (`(id`) is Redis 6.2's, and Redis 5.0 and 6.0 (which the README supports) refuse it as an invalid stream id.
 */
export function streamIdAfter(id: string): string {
  const m = /^(\d+)-(\d+)$/.exec(id);
  if (!m) throw new Error(`not a stream entry id: ${id}`);
  const seq = BigInt(m[2]);
  return seq < MAX_SEQ ? `${m[1]}-${seq + 1n}` : `${BigInt(m[1]) + 1n}-0`;
}

/** The snapshot's entries, a page (at most `page` entries) at a time. */
export async function* streamPages(
  redis: AuditStreamReader,
  stream: string,
  snapshot: StreamSnapshot,
  page = STREAM_PAGE,
): AsyncGenerator<[string, string[]][]> {
  if (snapshot.end === undefined) return;
  let start = '-';
  for (;;) {
    const from = start;
    const entries = await readKey(redis, stream, 'a stream', () =>
      redis.xrange(stream, from, snapshot.end ?? '+', 'COUNT', page),
    );
    if (entries.length > 0) yield entries;
    const last = entries[entries.length - 1]?.[0];
    if (entries.length < page || last === undefined || last === snapshot.end) return;
    start = streamIdAfter(last);
  }
}

/** Reads a whole chain from Redis into memory, in pages (for a test or a short chain: verify and export stream it). */
export async function readStreamChain(redis: AuditStreamReader, keys: AuditStreamKeys, page = STREAM_PAGE): Promise<StreamChain> {
  const snapshot = await streamSnapshot(redis, keys);
  const lines: string[] = [];
  const ids: string[] = [];
  for await (const entries of streamPages(redis, keys.stream, snapshot, page)) {
    for (const [id, fields] of entries) {
      ids.push(id);
      lines.push(lineOf(fields));
    }
  }
  return { text: lines.map((l) => `${l}\n`).join(''), ids, checkpoint: snapshot.checkpoint };
}

/**
 * Verifies a chain in Redis as verifyStreamChain does, reading it page by page: what is held is a page and the
 * state of the check, never the chain. Stops at the first bad record.
 */
export async function verifyRedisChain(
  redis: AuditStreamReader,
  keys: AuditStreamKeys,
  key?: Buffer,
  page = STREAM_PAGE,
  snapshot?: StreamSnapshot,
): Promise<VerifyReport & { firstBadEntry?: string }> {
  const seen = snapshot ?? (await streamSnapshot(redis, keys));
  const verifier = new StreamVerifier(keys.stream, seen.checkpoint, key);
  pages: for await (const entries of streamPages(redis, keys.stream, seen, page)) {
    for (const [id, fields] of entries) if (!verifier.entry(id, lineOf(fields))) break pages;
  }
  return verifier.finish();
}

/**
 * The records of a chain in Redis as CSV rows (each with its line end), a page at a time, up to the snapshot's last
 * entry. A line that is not a record throws, naming it (`name line <n>`).
 */
export async function* streamCsvRows(
  redis: AuditStreamReader,
  keys: AuditStreamKeys,
  snapshot: StreamSnapshot,
  page = STREAM_PAGE,
): AsyncGenerator<string> {
  let line = 0;
  for await (const entries of streamPages(redis, keys.stream, snapshot, page)) {
    let rows = '';
    for (const [, fields] of entries) {
      line++;
      let record: AuditRecord;
      try {
        record = JSON.parse(lineOf(fields)) as AuditRecord;
      } catch {
        throw new Error(
          `${keys.stream} line ${line} is not a JSON record: nothing exported (lh-audit verify names what was altered)`,
        );
      }
      rows += `${csvRow(record)}\n`;
    }
    yield rows;
  }
}

/**
 * Verifies a chain read from a stream as verifyChain does a file (hashes, links, the signed checkpoint), and more:
 * the checkpoint is written in the same atomic step as every append, so a chain without one has lost it. The bad
 * record is named by its stream entry id.
 */
export function verifyStreamChain(name: string, chain: StreamChain, key?: Buffer): VerifyReport & { firstBadEntry?: string } {
  const verifier = new StreamVerifier(name, chain.checkpoint, key);
  const lines = chain.text.split('\n');
  lines.pop();
  for (let i = 0; i < lines.length; i++) if (!verifier.entry(chain.ids[i], lines[i])) break;
  return verifier.finish();
}

/**
 * The check of a stream, an entry at a time: each file record opens a part of the chain (the first one, and one
 * declaring records Redis lost before it), verified as verifyChain verifies a file; what it keeps of the entries is
 * the ids it may have to name (the first, the bad one, the one after the checkpoint's record).
 */
class StreamVerifier {
  private readonly verifier: ChainVerifier;
  /** The first line (1-based, over the whole stream) of each part. */
  private readonly partLines: number[] = [];
  private lines = 0;
  /** The entry ids of the lines a report may name, by line. */
  private readonly named = new Map<number, string>();
  /** The seq the checkpoint names; the first line holding it, and the seq of the line after it (and of the first). */
  private readonly checkpointSeq: number | undefined;
  private atLine: number | undefined;
  private afterSeq: number | undefined;
  private firstSeq: number | undefined;

  constructor(
    private readonly name: string,
    private readonly checkpoint: string | undefined,
    private readonly key: Buffer | undefined,
  ) {
    this.verifier = new ChainVerifier({ checkpoint, key, owner: streamOwner(name) });
    this.checkpointSeq = checkpointSeq(checkpoint);
  }

  private partName(i: number): string {
    return `${this.name} part ${i + 1}`;
  }

  private emptied(): VerifyReport & { firstBadEntry?: string } {
    return emptiedReport(this.name, this.checkpoint ?? '', this.key);
  }

  /** One entry: false once a bad record ended the check. */
  entry(id: string, line: string): boolean {
    const at = ++this.lines;
    if (this.partLines.length === 0 || opensPart(line)) {
      if (this.partLines.length > 0) this.verifier.endFile('');
      this.verifier.beginFile(this.partName(this.partLines.length));
      this.partLines.push(at);
    }
    if (at === 1) this.named.set(at, id);
    if (!this.verifier.line(line)) {
      this.named.set(at, id);
      return false;
    }
    const seq = this.verifier.report.lastSeq;
    if (at === 1) this.firstSeq = seq;
    if (this.atLine !== undefined && this.afterSeq === undefined) {
      this.afterSeq = seq;
      this.named.set(at, id);
    }
    if (this.atLine === undefined && seq === this.checkpointSeq) this.atLine = at;
    return true;
  }

  finish(): VerifyReport & { firstBadEntry?: string } {
    const { name } = this;
    if (this.lines === 0 && this.checkpoint !== undefined) return this.emptied();
    if (this.partLines.length === 0) {
      this.verifier.beginFile(this.partName(0));
      this.partLines.push(1);
    }
    this.verifier.endFile('');
    const report: VerifyReport & { firstBadEntry?: string } = this.verifier.finish();
    report.files = 1;
    // one part is named as the stream
    const single = this.partLines.length === 1;
    const partOf = (file: string): number => this.partLines.findIndex((_, k) => this.partName(k) === file);
    if (single) report.gaps = report.gaps.map((g) => (partOf(g.file) === 0 ? { ...g, file: name } : g));
    // a part's line as a line of the whole stream (entry ids are numbered over the whole stream)
    if (report.firstBad) {
      const i = partOf(report.firstBad.file);
      if (i >= 0) report.firstBad = { ...report.firstBad, file: name, line: this.partLines[i] + report.firstBad.line - 1 };
    }
    // a declared gap makes the report not ok, yet what follows still checks the records around it: a gap record needs
    // no key, so one appended by someone without it must not excuse records after the checkpoint or a checkpoint removed
    const intact = (): boolean => report.firstBad === undefined;
    if (intact() && this.lines > 0 && this.checkpoint === undefined) {
      failAtCheckpoint(report, report.lastSeq, 'the checkpoint is missing (it is written with every append: it was deleted)');
    }
    const named = this.checkpointSeq;
    if (intact() && named !== undefined && named < report.lastSeq) {
      // unlike a file's, a stream's checkpoint is set in the same atomic step as every append: records after it were
      // put there by someone who can seal records (no key needed) but not sign the checkpoint
      // located by seq, not by line (after a declared gap the chain goes on above the records lost)
      const at = this.atLine ?? 0;
      const next = (this.atLine === undefined ? this.firstSeq : this.afterSeq) ?? named + 1;
      report.ok = false;
      report.firstBad = {
        file: name,
        line: at + 1,
        seq: next,
        reason: `records #${next} to #${report.lastSeq} come after the checkpoint (#${named}), which is written with every append: they were added by someone who could not sign it`,
      };
      report.records = at;
      // a gap declared by one of those records is theirs: not records missing around which the chain verifies
      report.gaps = report.gaps.filter((g) => g.to + 1 <= named);
    }
    if (report.firstBad && report.firstBad.file === name) {
      const id = this.named.get(report.firstBad.line);
      if (id !== undefined) {
        report.firstBadEntry = id;
        report.firstBad = { ...report.firstBad, file: `${name} entry ${id}` };
      } else report.firstBad = { ...report.firstBad, file: `${name} (after the last entry)` };
    }
    return report;
  }
}

/**
 * The report of an emptied stream whose checkpoint stayed: the checkpoint is checked (its signature, as for any chain)
 * and said as found (verified, unchecked, unsigned, bad), never "absent"; the records it names were removed.
 */
function emptiedReport(name: string, checkpoint: string, key: Buffer | undefined): VerifyReport & { firstBadEntry?: string } {
  const verifier = new ChainVerifier({ checkpoint, key, owner: streamOwner(name) });
  const report: VerifyReport & { firstBadEntry?: string } = verifier.finish();
  report.files = 1;
  if (report.checkpoint === 'bad' && report.firstBad) {
    report.firstBad = { ...report.firstBad, file: `${name} checkpoint` };
    return report;
  }
  const named = checkpointSeq(checkpoint);
  report.ok = false;
  report.firstBad = {
    file: `${name} (after the last entry)`,
    line: 1,
    seq: 0,
    reason: `the stream is empty but its checkpoint (${report.checkpoint}) names records${named !== undefined ? ` up to #${named}` : ''}: they were removed`,
  };
  return report;
}

/**
 * Whose chain a stream is, by the instrument id in its key (`…:i:{<id>}:audit`, the first 24 hex digits of the
 * SHA-256 of the instrument's identity, as src/coordination/keys.ts makes it; of its key as spelled before 0.4.0).
 */
function streamOwner(name: string): VerifyInput['owner'] {
  const id = /\{([0-9a-f]{24})\}/.exec(name)?.[1];
  if (id === undefined) return undefined;
  // before 0.4.0 the id was the hash of the instrument as spelled, not of its identity: a chain of then still verifies
  const hashes = (instrument: string): string[] =>
    [instrumentIdentity(instrument), instrument].map((t) => sha256Hex(t).slice(0, 24));
  return { what: `the instrument ${id}`, is: (instrument) => hashes(instrument).includes(id) };
}

function opensPart(line: string): boolean {
  if (!line.includes('"phase":"file"')) return false;
  try {
    return (JSON.parse(line) as { phase?: unknown }).phase === 'file';
  } catch {
    return false;
  }
}

/** The seq a checkpoint names, if it parses. */
function checkpointSeq(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    const seq = (JSON.parse(text) as { seq?: unknown }).seq;
    return typeof seq === 'number' && Number.isInteger(seq) ? seq : undefined;
  } catch {
    return undefined;
  }
}

/** The records of a stream chain (for export). */
export function streamRecords(chain: StreamChain, name = 'the stream'): AuditRecord[] {
  return parseRecords(chain.text, name);
}
