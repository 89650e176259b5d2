import { instrumentIdentity } from '../coordination/instrument-identity';
import { sha256Hex } from './canonical';
import { parseRecords } from './export';
import { type AuditRecord } from './record';
import { type AuditStreamKeys } from './redis-log';
import { failAtCheckpoint, verifyChain, type VerifyInput, type VerifyReport } from './verify';

/** The reads verify and export make of a Redis audit chain. */
export interface AuditStreamReader {
  xrange(key: string, start: string, end: string, count: 'COUNT', n: number): Promise<[string, string[]][]>;
  get(key: string): Promise<string | null>;
}

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

/** Reads a whole chain from Redis, in pages. */
export async function readStreamChain(redis: AuditStreamReader, keys: AuditStreamKeys, page = 1000): Promise<StreamChain> {
  const lines: string[] = [];
  const ids: string[] = [];
  let start = '-';
  for (;;) {
    const entries = await redis.xrange(keys.stream, start, '+', 'COUNT', page);
    for (const [id, fields] of entries) {
      ids.push(id);
      lines.push(lineOf(fields));
    }
    if (entries.length < page) break;
    start = `(${entries[entries.length - 1][0]}`;
  }
  const checkpoint = await redis.get(keys.checkpoint);
  return { text: lines.map((l) => `${l}\n`).join(''), ids, checkpoint: checkpoint ?? undefined };
}

/**
 * Verifies a chain read from a stream as verifyChain does a file (hashes, links, the signed checkpoint), and more:
 * the checkpoint is written in the same atomic step as every append, so a chain without one has lost it. The bad
 * record is named by its stream entry id.
 */
export function verifyStreamChain(name: string, chain: StreamChain, key?: Buffer): VerifyReport & { firstBadEntry?: string } {
  // each file record opens a part of the chain (the first one, and one declaring records Redis lost before it)
  const parts = partsOf(chain.text);
  const partName = (i: number): string => (parts.length === 1 ? name : `${name} part ${i + 1}`);
  const report: VerifyReport & { firstBadEntry?: string } = verifyChain({
    files: parts.map((p, i) => ({ name: partName(i), text: p.text })),
    checkpoint: chain.checkpoint,
    key,
    owner: streamOwner(name),
  });
  report.files = 1;
  // a part's line as a line of the whole stream (entry ids are numbered over the whole stream)
  if (report.firstBad) {
    const i = parts.findIndex((_, k) => partName(k) === report.firstBad?.file);
    if (i >= 0) report.firstBad = { ...report.firstBad, file: name, line: parts[i].firstLine + report.firstBad.line - 1 };
  }
  // a declared gap makes the report not ok, yet what follows still checks the records around it: a gap record needs no
  // key, so one appended by someone without it must not excuse records after the checkpoint or a checkpoint removed
  const intact = (): boolean => report.firstBad === undefined;
  if (intact() && chain.ids.length > 0 && chain.checkpoint === undefined) {
    failAtCheckpoint(report, report.lastSeq, 'the checkpoint is missing (it is written with every append: it was deleted)');
  }
  const named = checkpointSeq(chain.checkpoint);
  if (intact() && named !== undefined && named < report.lastSeq) {
    // unlike a file's, a stream's checkpoint is set in the same atomic step as every append: records after it were
    // put there by someone who can seal records (no key needed) but not sign the checkpoint
    // located by seq, not by line (after a declared gap the chain goes on above the records lost)
    const seqs = seqsOf(chain.text);
    const at = seqs.indexOf(named);
    const next = seqs[at + 1] ?? named + 1;
    report.ok = false;
    report.firstBad = {
      file: name,
      line: at + 2,
      seq: next,
      reason: `records #${next} to #${report.lastSeq} come after the checkpoint (#${named}), which is written with every append: they were added by someone who could not sign it`,
    };
    report.records = at + 1;
    // a gap declared by one of those records is theirs: not records missing around which the chain verifies
    report.gaps = report.gaps.filter((g) => g.to + 1 <= named);
  }
  if (chain.ids.length === 0 && chain.checkpoint !== undefined && intact()) {
    report.ok = false;
    report.firstBad = {
      file: name,
      line: 1,
      seq: 0,
      reason: 'the stream is empty but its checkpoint names records: they were removed',
    };
  }
  if (report.firstBad && report.firstBad.file === name) {
    const id = chain.ids[report.firstBad.line - 1];
    if (id !== undefined) {
      report.firstBadEntry = id;
      report.firstBad = { ...report.firstBad, file: `${name} entry ${id}` };
    } else report.firstBad = { ...report.firstBad, file: `${name} (after the last entry)` };
  }
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

/** The stream's lines cut into parts, each from a file record (a line that does not parse stays in its part). */
function partsOf(text: string): { text: string; firstLine: number }[] {
  const lines = text.split('\n');
  lines.pop();
  const parts: { lines: string[]; firstLine: number }[] = [];
  lines.forEach((line, i) => {
    if (parts.length === 0 || (i > 0 && opensPart(line))) parts.push({ lines: [], firstLine: i + 1 });
    parts[parts.length - 1].lines.push(line);
  });
  return parts.length === 0
    ? [{ text, firstLine: 1 }]
    : parts.map((p) => ({ text: p.lines.map((l) => `${l}\n`).join(''), firstLine: p.firstLine }));
}

function opensPart(line: string): boolean {
  if (!line.includes('"phase":"file"')) return false;
  try {
    return (JSON.parse(line) as { phase?: unknown }).phase === 'file';
  } catch {
    return false;
  }
}

/** The seq of each line of a verified stream (NaN for a line that does not parse). */
function seqsOf(text: string): number[] {
  const lines = text.split('\n');
  lines.pop();
  return lines.map((line) => {
    try {
      const seq = (JSON.parse(line) as { seq?: unknown }).seq;
      return typeof seq === 'number' ? seq : NaN;
    } catch {
      return NaN;
    }
  });
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
