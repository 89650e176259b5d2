import { type AuditRecord, type Checkpoint, checkpointMac, GENESIS, hashOf } from './record';

export interface ChainFileText {
  /** A name to report (the file's path). */
  name: string;
  text: string;
}

/** A chain file read only when verify comes to it: one file of a long chain in memory at a time. */
export interface ChainFileSource {
  /** A name to report (the file's path). */
  name: string;
  read: () => string;
}

export interface BadRecord {
  file: string;
  /** 1-based line within the file. */
  line: number;
  /** The record's seq as expected at that place. */
  seq: number;
  reason: string;
}

export interface VerifyReport {
  ok: boolean;
  /** Complete records that verified. */
  records: number;
  files: number;
  lastSeq: number;
  lastHash: string;
  /** Lines cut short by a crash (the end of a file only): not tampering, the write was never acknowledged. */
  torn: { file: string; line: number }[];
  /** The first record that does not verify: everything before it is intact. */
  firstBad?: BadRecord;
  /** verified: signed and matching; unsigned: present without a signature; unchecked: signed but no key given. */
  checkpoint: 'verified' | 'unsigned' | 'unchecked' | 'absent' | 'bad';
  /** Intents with no outcome record (a crash or a close before the answer): their outcome is unknown. */
  openIntents: string[];
  /**
   * Records missing where the writer declared it (a file record saying the chain lost them: a chain file deleted,
   * moved or cut short, or Redis losing its data): the records around a gap verify, but the chain is not complete, so
   * `ok` is false. After a gap, an outcome whose intent is not in the chain is taken for one of a missing intent.
   */
  gaps: { file: string; line: number; from: number; to: number; reason: string }[];
}

export interface VerifyInput {
  files: readonly (ChainFileText | ChainFileSource)[];
  /** The checkpoint file's text, when there is one. */
  checkpoint?: string;
  key?: Buffer;
  /**
   * Whose chain this is, where its place says it (the chain's file name, the stream key): `is` tells whether an
   * instrument of a record is that one. Every chain of one Node-RED is signed with the same key, and a checkpoint names
   * no instrument: without this, the whole chain of another instrument put in its place verifies as this one.
   */
  owner?: { what: string; is: (instrument: string) => boolean };
}

/**
 * Checks a chain: every line parses, its hash matches its content, it names the previous record's hash and the next
 * seq, each file opens with its file record; then the signed checkpoint must name a record that is there, so a tail
 * removed from the end is found too. Reports the first record that fails.
 */
export function verifyChain(input: VerifyInput): VerifyReport {
  const verifier = new ChainVerifier(input);
  verifier.report.files = input.files.length;
  for (const [i, file] of input.files.entries()) {
    const text = 'text' in file ? file.text : file.read();
    // the last file empty: a new file begun by a writer killed before it wrote into it (a crash, not an edit: its next
    // writer writes into it); records removed from the end with it are told by the checkpoint, as any cut at a line end
    if (text === '' && i === input.files.length - 1) {
      verifier.report.torn.push({ file: file.name, line: 1 });
      break;
    }
    const lines = text.split('\n');
    const tail = lines.pop() ?? '';
    verifier.beginFile(file.name);
    for (const line of lines) if (!verifier.line(line)) return verifier.report;
    if (!verifier.endFile(tail)) return verifier.report;
  }
  return verifier.finish();
}

/**
 * verifyChain a line at a time, for a chain read in pieces (a Redis stream, page by page): what it holds is the state
 * of the check (the intent ids seen, the open intents), never the records. Feed each file with beginFile, its complete
 * lines with line and what follows its last line end with endFile, then finish; line and endFile say false once a bad
 * record ended the check (the report is then final: read no further).
 */
export class ChainVerifier {
  readonly report: VerifyReport = {
    ok: true,
    records: 0,
    files: 0,
    lastSeq: -1,
    lastHash: GENESIS,
    torn: [],
    checkpoint: 'absent',
    openIntents: [],
    gaps: [],
  };
  /** The index of the file read before (a file record names the next one, or a later one after a declared gap). */
  private fileBefore = 0;
  private readonly open = new Map<string, true>();
  /** Every intent id and its seq: an id is used once (a random UUID per request). */
  private readonly ids = new Map<string, number>();
  /** Outcomes after a declared gap whose intent is not in the chain (lost with the gap), by id: one each. */
  private readonly outcomesOfLost = new Map<string, number>();
  /** The instruments of records found to be the owner's (replicas sharing a stream may spell it apart). */
  private readonly owners = new Set<string>();
  private readonly checkpoint: Checkpoint | undefined;
  private checkpointHashSeen: string | undefined;
  /** The file being read: its place in the chain (from 0), name and lines read. */
  private f = -1;
  private name = '';
  private lineNo = 0;
  private stopped = false;

  constructor(private readonly input: Omit<VerifyInput, 'files'>) {
    if (input.checkpoint !== undefined && input.checkpoint.trim() !== '') {
      try {
        this.checkpoint = JSON.parse(input.checkpoint) as Checkpoint;
      } catch {
        this.report.checkpoint = 'bad';
      }
    }
  }

  /** Whether a bad record ended the check. */
  get failed(): boolean {
    return this.stopped;
  }

  private ownerSays(instrument: unknown): boolean {
    if (typeof instrument !== 'string') return false;
    if (this.owners.has(instrument)) return true;
    if (!this.input.owner?.is(instrument)) return false;
    this.owners.add(instrument);
    return true;
  }

  private bad(line: number, reason: string): false {
    const report = this.report;
    report.ok = false;
    report.firstBad = { file: this.name, line, seq: report.lastSeq + 1, reason };
    report.openIntents = [...this.open.keys()];
    this.stopped = true;
    return false;
  }

  /** The next file of the chain begins (`name` names it in the report). */
  beginFile(name: string): void {
    this.f++;
    this.report.files = Math.max(this.report.files, this.f + 1);
    this.name = name;
    this.lineNo = 0;
  }

  /** The end of the current file: `tail` is what follows its last line end (a line cut short by a crash). */
  endFile(tail: string): boolean {
    if (this.stopped) return false;
    if (this.lineNo === 0 && tail === '')
      return this.bad(1, `file ${this.f + 1} of the chain is empty (its records were removed)`);
    // Only the end of a file may be torn; the chain goes on from the last complete record.
    if (tail !== '') this.report.torn.push({ file: this.name, line: this.lineNo + 1 });
    // a file holding a torn line only (its file record cut short by a crash): it keeps its place, the next file follows
    if (this.lineNo === 0) this.fileBefore++;
    return true;
  }

  /** One complete line of the current file (without its line end). */
  line(text: string): boolean {
    if (this.stopped) return false;
    const report = this.report;
    const f = this.f;
    const lineNo = ++this.lineNo;
    const expectedSeq = report.lastSeq + 1;
    // a line end of a copy through Windows (CRLF) is the file's, not the record's: no reader reads the record otherwise
    const line = text.endsWith('\r') ? text.slice(0, -1) : text;
    let record: AuditRecord;
    try {
      record = JSON.parse(line) as AuditRecord;
    } catch {
      return this.bad(lineNo, `line ${lineNo} is not a JSON record (altered or inserted)`);
    }
    if (typeof record !== 'object' || record === null || typeof record.hash !== 'string') {
      return this.bad(lineNo, `line ${lineNo} is not an audit record`);
    }
    if (hashOf(record) !== record.hash)
      return this.bad(lineNo, `record #${String(record.seq)} was altered: its hash does not match its content`);
    // the writer writes each record as JSON.stringify makes it: another spelling of the same value (a key given twice,
    // of which JSON.parse keeps the last but another reader the first; spaces; escapes) is an edit of the line
    if (JSON.stringify(record) !== line)
      return this.bad(lineNo, `record #${String(record.seq)} was altered: its line is not the one written for its content`);
    // one chain, one instrument: a record of another comes from another instrument's chain
    if (this.input.owner && !this.ownerSays(record.instrument)) {
      return this.bad(
        lineNo,
        `record #${String(record.seq)} is of the instrument ${JSON.stringify(record.instrument)}, not of ${this.input.owner.what}: it comes from another instrument's chain`,
      );
    }
    const gap = lineNo === 1 && record.phase === 'file' ? record.gap : undefined;
    if (gap !== undefined) {
      // a declared gap must start right after the records before it and end right before this record
      const after = gap && typeof gap === 'object' ? gap.after : undefined;
      const fits =
        !!gap &&
        typeof gap === 'object' &&
        (after === null ? report.lastSeq === -1 : !!after && after.seq === report.lastSeq && after.hash === report.lastHash) &&
        gap.from === report.lastSeq + 1 &&
        Number.isSafeInteger(gap.to) &&
        // no numbers (to = from - 1): records lost whose numbers were used again since, by another writer
        gap.to >= gap.from - 1 &&
        record.seq === gap.to + 1 &&
        record.phase === 'file' &&
        record.file > this.fileBefore;
      if (!fits) {
        return this.bad(
          lineNo,
          `record #${String(record.seq)} declares records missing that do not fit the records before it (#${report.lastSeq} is the last one)`,
        );
      }
      report.gaps.push({ file: this.name, line: lineNo, from: gap.from, to: gap.to, reason: String(gap.reason ?? '') });
    } else if (record.prev !== report.lastHash || record.seq !== expectedSeq) {
      return this.bad(
        lineNo,
        `record #${String(record.seq)} does not follow record #${report.lastSeq} (expected #${expectedSeq}): a record before it was removed, inserted or moved`,
      );
    }
    const opensFile = lineNo === 1;
    if (opensFile !== (record.phase === 'file')) {
      return this.bad(
        lineNo,
        opensFile ? `file ${f + 1} does not open with its file record` : `a file record in the middle of a file`,
      );
    }
    if (record.phase === 'file' && gap === undefined && record.file !== this.fileBefore + 1) {
      return this.bad(
        lineNo,
        `this is file ${String(record.file)} of the chain, found in place ${f + 1} (files swapped or missing)`,
      );
    }
    if (record.phase === 'file') this.fileBefore = record.file;
    if (record.phase === 'intent') {
      const seen = this.ids.get(record.id);
      if (seen !== undefined) {
        return this.bad(lineNo, `record #${record.seq} repeats the intent id ${record.id} of record #${seen} (appended twice)`);
      }
      this.ids.set(record.id, record.seq);
      this.open.set(record.id, true);
    }
    if (record.phase === 'outcome') {
      const lostIntent = !this.open.has(record.id) && report.gaps.length > 0 && !this.ids.has(record.id);
      const before = this.outcomesOfLost.get(record.id);
      if (before !== undefined) {
        return this.bad(
          lineNo,
          `record #${record.seq} is a second outcome of the intent ${record.id} lost in a gap (its first: record #${before}): appended twice`,
        );
      }
      if (!this.open.has(record.id) && !lostIntent) {
        const intent = this.ids.get(record.id);
        return this.bad(
          lineNo,
          intent === undefined
            ? `record #${record.seq} is an outcome without an intent before it`
            : `record #${record.seq} is a second outcome of the intent #${intent} (${record.id}): appended twice`,
        );
      }
      if (lostIntent) this.outcomesOfLost.set(record.id, record.seq);
      this.open.delete(record.id);
    }
    report.records++;
    report.lastSeq = record.seq;
    report.lastHash = record.hash;
    if (this.checkpoint && record.seq === this.checkpoint.seq) this.checkpointHashSeen = record.hash;
    return true;
  }

  /** The end of the chain: the checkpoint is checked against the records read. */
  finish(): VerifyReport {
    const report = this.report;
    if (this.stopped) return report;
    this.stopped = true;
    report.openIntents = [...this.open.keys()];
    if (report.gaps.length > 0) report.ok = false;
    const checkpoint = this.checkpoint;
    const key = this.input.key;
    if (checkpoint) {
      if (typeof checkpoint.mac === 'string') {
        if (!key) report.checkpoint = 'unchecked';
        else if (checkpointMac(key, checkpoint) !== checkpoint.mac) {
          report.checkpoint = 'bad';
          return failAtCheckpoint(report, checkpoint.seq, 'the checkpoint signature does not match (altered, or another key)');
        } else report.checkpoint = 'verified';
      } else {
        report.checkpoint = 'unsigned';
        if (key) {
          // a writer given the key signs every checkpoint: an unsigned one where a key is expected was put there by
          // someone who could write the chain but not sign it (every hash of a rewritten chain can be recomputed)
          return failAtCheckpoint(
            report,
            checkpoint.seq,
            'the checkpoint is not signed, but a key was given: the chain was rewritten by someone without the key',
          );
        }
      }
      if (checkpoint.seq > report.lastSeq) {
        report.ok = false;
        report.firstBad = {
          // a tail removed is named after the last line of the last file
          file: this.f >= 0 ? this.name : 'checkpoint',
          line: (this.f >= 0 ? this.lineNo : 0) + 1,
          seq: report.lastSeq + 1,
          reason: `records #${report.lastSeq + 1} to #${checkpoint.seq} were removed from the end: the checkpoint names record #${checkpoint.seq}`,
        };
      } else if (this.checkpointHashSeen !== checkpoint.hash) {
        failAtCheckpoint(
          report,
          checkpoint.seq,
          `record #${checkpoint.seq} is not the one the checkpoint names: the chain was rewritten`,
        );
      }
    } else if (report.checkpoint === 'bad') {
      failAtCheckpoint(report, 0, 'the checkpoint file is not JSON');
    }
    return report;
  }
}

/**
 * Marks `report` failed at the checkpoint (its line 1) with the record `seq` it concerns: the chain is not what the
 * checkpoint says. Returns the report.
 */
export function failAtCheckpoint(report: VerifyReport, seq: number, reason: string): VerifyReport {
  report.ok = false;
  report.firstBad = { file: 'checkpoint', line: 1, seq, reason };
  return report;
}

/** Why an intact chain is still not shown to be authentic: the checkpoint could not be checked against a key. */
const NOT_AUTHENTICATED: Record<Exclude<VerifyReport['checkpoint'], 'verified' | 'bad'>, string> = {
  unsigned:
    'the checkpoint is not signed (no lhAudit.key where it was written): anyone able to write the chain could have rewritten it whole with fresh hashes, and this check would not see it',
  unchecked: 'the checkpoint is signed but no --key or --key-file was given: its signature was not checked',
  absent: 'there is no checkpoint: a chain rewritten whole, or records removed from its end, would not be seen',
};

/** Whether an intact chain is also authenticated: its signed checkpoint checked with the key. */
export function authenticated(report: VerifyReport): boolean {
  return report.ok && report.checkpoint === 'verified';
}

/** The exit code of `lh-audit verify`: 0 intact and authenticated, 1 tampered, 3 intact but not authenticated. */
export function verifyExitCode(report: VerifyReport): 0 | 1 | 3 {
  if (!report.ok) return 1;
  return authenticated(report) ? 0 : 3;
}

/** One line a person reads. */
export function describeReport(report: VerifyReport): string {
  const parts: string[] = [];
  const counted = `${report.records} records in ${report.files} file(s), last #${report.lastSeq}`;
  if (authenticated(report)) parts.push(`OK: ${counted}`);
  else if (report.ok) {
    const why = NOT_AUTHENTICATED[report.checkpoint as keyof typeof NOT_AUTHENTICATED];
    parts.push(`INTACT, NOT AUTHENTICATED: ${counted}; ${why}`);
  } else if (report.firstBad) {
    const b = report.firstBad;
    parts.push(
      `TAMPERED: ${b.file} line ${b.line} (record #${b.seq}): ${b.reason}; the ${report.records} records before it verify`,
    );
  }
  for (const g of report.gaps) {
    const what =
      g.to < g.from
        ? `records before #${g.from} are missing (their numbers were used again)`
        : `records #${g.from} to #${g.to} are missing`;
    parts.push(`INCOMPLETE: ${what}, declared by ${g.file} line ${g.line} (${g.reason}); the records around the gap verify`);
  }
  parts.push(`checkpoint ${report.checkpoint}`);
  for (const t of report.torn) parts.push(`torn last line (a write cut short, never acknowledged): ${t.file} line ${t.line}`);
  if (report.openIntents.length > 0) parts.push(`${report.openIntents.length} intent(s) without an outcome (outcome unknown)`);
  return parts.join('\n');
}
