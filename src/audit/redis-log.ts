import { EventEmitter } from 'events';

import { type AuditRecord, type ChainGap, type Checkpoint, checkpointMac, GENESIS, type RecordFields, seal } from './record';

/**
 * Said when the chain in Redis is signed and this Node-RED has no key. Not `lhAudit.key: give it…`: the redaction
 * step every log line passes reads `name: value` under a secret's name as a secret and would keep only `***`.
 */
export const AUDIT_KEY_MISSING =
  'the audit chain in Redis is signed, but this Node-RED has no lhAudit.key; give it the key the other replicas have (unsigned checkpoints would make the chain fail verify)';

/**
 * The part of an ioredis client (single, Sentinel or Cluster) the Redis audit chain uses. Every key of one chain
 * carries the instrument's hash tag, so its script runs on one Cluster slot.
 */
export interface AuditRedis {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  get(key: string): Promise<string | null>;
}

/** Where one instrument's chain lives in Redis (see CoordinationKeys: `<prefix>:i:{<id>}:audit...`). */
export interface AuditStreamKeys {
  /** The stream: one entry per record, field `r` = the record's JSON. */
  stream: string;
  /** `<seq> <hash>` of the last record: what an append must chain on. */
  head: string;
  /** The checkpoint of the last record (JSON, HMAC-signed when a key is configured). */
  checkpoint: string;
}

/**
 * KEYS: stream, head, checkpoint. ARGV: expected head ('' for a new chain), new head, checkpoint JSON, records...
 * Compare-and-append: the records go in (with the head and the checkpoint, in one atomic step) only when the head is
 * the one they were chained on; otherwise nothing is written and the current head and checkpoint come back, to chain
 * on (once the checkpoint is found to sign that head) and retry. A new chain (no head) is refused (-1) where the
 * stream has records: its head was deleted, and a chain begun there would follow the old one.
 * (Redis Lua has no SHA-256: the records are sealed in Node.)
 */
export const COMPARE_AND_APPEND = `
local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then return {0, head, redis.call('GET', KEYS[3]) or ''} end
if head == '' and redis.call('XLEN', KEYS[1]) > 0 then return {-1, ''} end
for i = 4, #ARGV do redis.call('XADD', KEYS[1], '*', 'r', ARGV[i]) end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], ARGV[3])
return {1, ARGV[2]}
`;

/** KEYS: head, checkpoint. Both in one atomic step (another replica's append between two GETs would mismatch them). */
export const READ_HEAD = `return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or ''}`;

/** KEYS: stream. ARGV: count. The stream's last `count` entries, newest first. */
export const READ_TAIL = `return redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', ARGV[1])`;

/** Records read back at most to check that the chain still holds the head a writer knew (beyond: not checked). */
const MAX_READ_BACK = 1024;

/** Appends chained on a head another replica moved meanwhile are resealed and retried this many times. */
export const MAX_APPEND_ATTEMPTS = 50;
/** How long an append waits for a connection being made before it fails. */
const READY_WAIT_MS = 2000;
/** The longest random pause before a retry (ms). */
const MAX_BACKOFF_MS = 20;
/** Records sent to Redis in one script call at most. */
const MAX_BATCH = 256;

export interface RedisAuditLogOptions {
  redis: AuditRedis;
  keys: AuditStreamKeys;
  instrument: string;
  /** Signs the checkpoint (HMAC-SHA256). Every replica must have the same key; it is never stored in Redis. */
  key?: Buffer;
  /**
   * Keys the chain was signed with before `key` (a key rotation): a head whose checkpoint one of them signed is
   * chained on too (the next checkpoint is signed with `key`). Never used to sign.
   */
  previousKeys?: Buffer[];
  /**
   * Also wait for this many Redis replicas to acknowledge each batch (Redis WAIT) before an append resolves; fewer
   * within `waitTimeoutMs` fail the append (the request is not sent). 0: Redis' own acknowledgement (the default).
   */
  waitReplicas?: number;
  waitTimeoutMs?: number;
}

interface Entry {
  fields: RecordFields;
  resolve: (record: AuditRecord) => void;
  reject: (err: Error) => void;
}

interface Head {
  seq: number;
  hash: string;
}

function parseHead(text: string): Head | undefined {
  const [seq, hash] = text.split(' ');
  return text === '' ? undefined : { seq: Number(seq), hash };
}

/** The part of the chain a checkpoint names (1 when it names none: a chain written before parts existed). */
function fileOf(checkpointText: string): number {
  try {
    const file = (JSON.parse(checkpointText) as { file?: unknown }).file;
    return typeof file === 'number' && Number.isSafeInteger(file) && file > 0 ? file : 1;
  } catch {
    return 1;
  }
}

/** The part the last file record among `records` opens, else `current`. */
function fileNoOf(records: readonly AuditRecord[], current: number): number {
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i];
    if (r.phase === 'file') return r.file;
  }
  return current;
}

/** The record of a stream entry's fields (`r`), if it parses. */
function recordOf(fields: string[]): AuditRecord | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== 'r') continue;
    try {
      const record = JSON.parse(fields[i + 1]) as AuditRecord;
      return record && typeof record === 'object' && typeof record.seq === 'number' ? record : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function headText(head: Head | undefined): string {
  return head ? `${head.seq} ${head.hash}` : '';
}

/**
 * One instrument's hash chain in a Redis stream, shared by every Node-RED of a coordination group. Records are
 * sealed here (seq, prev, SHA-256) on the head this process last saw and appended by a compare-and-append script:
 * when another replica appended meanwhile, the script refuses, the records are resealed on the new head and sent
 * again, so the chain never forks. In this process the appends are queued and sent in batches (one script call
 * for every append waiting), in the order they were made. An append resolves once Redis acknowledged it (and the
 * replicas asked for, with WAIT). A Redis error fails the appends of that batch only: the next append starts again
 * from the head in Redis.
 */
export class RedisAuditLog extends EventEmitter {
  private head?: Head;
  private headKnown = false;
  /** The highest seq this writer saw in the chain: a head below it means records were removed (or lost by Redis). */
  private highest = -1;
  /** The record at `highest` as this writer saw it (its seq and hash): the chain must still hold it, see checkKept. */
  private highestHead?: Head;
  /** The number of the head's file record (the chain's part): a declared gap opens the next one. */
  private fileNo = 1;
  /**
   * Records this writer saw are gone (Redis lost its data, or was restored from an older snapshot): the next append
   * opens a new part of the chain with a file record declaring them missing, so the records after it still link and
   * `lh-audit verify` reports the gap (an outcome whose intent was lost with it is then not taken for an insertion).
   */
  private gap?: ChainGap;
  /**
   * This writer refused the chain in Redis (altered, or signed with another key): it writes nothing until an
   * administrator moves the chain's keys aside, and the empty chain it then finds is a new one, not records lost.
   */
  private refused = false;
  private queue: Entry[] = [];
  private flushing?: Promise<void>;
  private closed = false;

  constructor(private readonly options: RedisAuditLogOptions) {
    super();
  }

  /** Where the chain is, for a person to verify (no password: the key names only). */
  get path(): string {
    return this.options.keys.stream;
  }

  async append(fields: RecordFields): Promise<AuditRecord> {
    if (this.closed) throw new Error('the audit trail is closed');
    const done = new Promise<AuditRecord>((resolve, reject) => this.queue.push({ fields, resolve, reject }));
    if (!this.flushing) this.flushing = this.flushAll().finally(() => (this.flushing = undefined));
    return done;
  }

  private async flushAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      let records: AuditRecord[];
      try {
        records = await this.write(batch.map((e) => e.fields));
      } catch (err) {
        this.headKnown = false;
        const failed = new Error(
          `the audit trail cannot be written to Redis (${(err as Error).message}): nothing is sent to the instrument`,
        );
        for (const entry of batch) entry.reject(failed);
        continue;
      }
      const own = records.slice(records.length - batch.length);
      batch.forEach((entry, i) => entry.resolve(own[i]));
      for (const record of records) this.emit('record', record);
    }
  }

  /**
   * A connection still being made (just deployed, or reconnecting) is waited for, up to READY_WAIT_MS: the commands
   * would fail at once otherwise (no offline queue), and the first request after a deploy with them.
   */
  private async connected(): Promise<void> {
    const redis = this.options.redis as AuditRedis & Partial<Pick<EventEmitter, 'once' | 'off'>> & { status?: string };
    if (!redis.status || !['wait', 'connecting', 'connect', 'reconnecting'].includes(redis.status) || !redis.once) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        redis.off?.('ready', done);
        resolve();
      };
      const timer = setTimeout(done, READY_WAIT_MS);
      redis.once?.('ready', done);
    });
  }

  /** Seals the fields on the current head and appends them; returns the records appended (a new chain's first too). */
  private async write(fields: RecordFields[]): Promise<AuditRecord[]> {
    await this.connected();
    const { redis, keys } = this.options;
    if (!this.headKnown) {
      const [head, checkpoint] = (await redis.eval(READ_HEAD, 2, keys.head, keys.checkpoint)) as [string, string];
      this.adopt(String(head ?? ''), String(checkpoint ?? ''));
      await this.checkKept();
      this.headKnown = true;
    }
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      const records = this.seal(fields);
      const last = records[records.length - 1];
      const next: Head = { seq: last.seq, hash: last.hash };
      let reply: [number, string, string?];
      try {
        reply = (await redis.eval(
          COMPARE_AND_APPEND,
          3,
          keys.stream,
          keys.head,
          keys.checkpoint,
          headText(this.head),
          headText(next),
          this.checkpointText(last, fileNoOf(records, this.fileNo)),
          ...records.map((r) => JSON.stringify(r)),
        )) as [number, string, string?];
      } catch (err) {
        // a call that timed out here (commandTimeout) may still have run in Redis: if the head is now the one these
        // records set, they are in (the read follows the call on the same connection); otherwise it failed
        if ((await redis.get(keys.head).catch(() => undefined)) !== headText(next)) throw err;
        reply = [1, headText(next)];
      }
      if (Number(reply[0]) === -1) {
        this.headKnown = false;
        this.refused = true;
        throw new Error(
          'the audit chain in Redis was altered (its head is gone but its stream has records); run lh-audit verify',
        );
      }
      // the head is the one these very records set (their hash covers seq, prev and content): the call ran once
      // already and its reply was lost, then the client resent it (ioredis resends a command in flight when the
      // connection drops): appended, not lost; resealing would append the same records twice
      if (Number(reply[0]) === 1 || String(reply[1]) === headText(next)) {
        this.head = next;
        this.fileNo = fileNoOf(records, this.fileNo);
        this.gap = undefined;
        this.refused = false;
        this.highest = Math.max(this.highest, next.seq);
        this.highestHead = next;
        await this.waitForReplicas();
        return records;
      }
      // another replica appended first: chain on its head, after a random pause that grows with each loss (the
      // writer that won knows the head already and would otherwise win every round: a loser would starve)
      this.adopt(String(reply[1]), String(reply[2] ?? ''));
      await this.checkKept();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_BACKOFF_MS, 2 ** attempt)));
    }
    throw new Error(`${MAX_APPEND_ATTEMPTS} appends in a row lost to other writers of the chain`);
  }

  /**
   * Takes a head this writer did not set (another replica's, or whoever else wrote to Redis) to chain on, once the
   * checkpoint beside it names it and, with a key, is signed with it: records sealed into the stream by someone
   * without the key (hashes need no key) would otherwise be signed into the chain by the next append. Throws when
   * not (nothing is appended, the request is not sent). A head behind one seen before is told (`warning`).
   */
  private adopt(headText: string, checkpointText: string): void {
    const head = parseHead(headText);
    const fail = (text: string): Error => {
      this.headKnown = false;
      this.refused = true;
      return new Error(text);
    };
    const altered = (why: string): Error => fail(`the audit chain in Redis was altered (${why}); run lh-audit verify`);
    if (!head) {
      if (checkpointText !== '') throw altered('its head is gone but its checkpoint is there');
    } else {
      let cp: Checkpoint | undefined;
      try {
        cp = JSON.parse(checkpointText) as Checkpoint;
      } catch {
        throw altered(`no checkpoint for its head #${head.seq}`);
      }
      if (cp?.seq !== head.seq || cp.hash !== head.hash)
        throw altered(`its head #${head.seq} is not the record its checkpoint names`);
      const { key, previousKeys = [] } = this.options;
      const signedBy = (k: Buffer): boolean => typeof cp?.mac === 'string' && cp.mac === checkpointMac(k, cp);
      if (!key && typeof cp.mac === 'string') {
        // unsigned checkpoints over a signed chain would make it fail verify with the key (as if rewritten)
        throw fail(AUDIT_KEY_MISSING);
      }
      if (key && !signedBy(key) && !previousKeys.some(signedBy)) {
        throw altered(
          `the checkpoint of its head #${head.seq} is not signed with this Node-RED's lhAudit.key (altered, or another key is configured on a replica)`,
        );
      }
    }
    const seq = head ? head.seq : -1;
    // the chain this writer refused was moved aside (RENAME, for an investigation): what it finds now is a new chain
    // (begun by it, or by another replica first), not the old one with records lost
    if (this.refused) {
      this.highest = -1;
      this.highestHead = undefined;
      this.refused = false;
    }
    this.fileNo = head ? fileOf(checkpointText) : 1;
    this.gap = undefined;
    if (seq < this.highest) {
      this.gap = {
        after: head ? { seq: head.seq, hash: head.hash } : null,
        from: seq + 1,
        to: this.highest,
        reason: `the chain in Redis went back from record #${this.highest} to ${head ? `#${seq}` : 'nothing'} (Redis lost its data, or was restored from an older snapshot)`,
      };
      this.emit(
        'warning',
        `the audit chain in Redis went back from record #${this.highest} to ${head ? `#${seq}` : 'nothing'}: records were removed from it (or lost by a Redis failover without lhAudit.redisWaitReplicas); run lh-audit verify and compare with the records lh-audit emitted`,
      );
    }
    this.highest = Math.max(this.highest, seq);
    this.head = head;
  }

  /**
   * A head adopted at or above the highest record this writer saw (`highestHead`): another writer appended, or, after
   * Redis came back from an older snapshot (or lost its data), a writer that had not seen the records lost numbered
   * its records as they were. Reads the chain back to that seq: when the record there is another one (and no gap is
   * declared over it), the records this writer saw up to it were lost and their numbers used again; the next append
   * declares that (a gap of no numbers, after the head), so an outcome whose intent was lost with them is not taken
   * for an insertion. Otherwise the head is the highest seen.
   */
  private async checkKept(): Promise<void> {
    const head = this.head;
    const known = this.highestHead;
    if (!head || this.gap || (known && head.seq < known.seq)) return;
    if (!known || (head.seq === known.seq && head.hash === known.hash)) {
      this.highestHead = head;
      return;
    }
    const count = head.seq - known.seq + 1;
    if (count > MAX_READ_BACK) return void (this.highestHead = head);
    const entries = (await this.options.redis.eval(READ_TAIL, 1, this.options.keys.stream, count)) as [string, string[]][];
    for (const [, fields] of entries ?? []) {
      const record = recordOf(fields);
      if (!record) continue;
      if (record.seq === known.seq) {
        if (record.hash === known.hash) return void (this.highestHead = head);
        break;
      }
      // records lost and declared by another writer already
      if (record.phase === 'file' && record.gap && record.gap.from <= known.seq && known.seq <= record.gap.to)
        return void (this.highestHead = head);
      if (record.seq < known.seq) break;
    }
    const lost = Math.max(this.highest, known.seq);
    this.gap = {
      after: { seq: head.seq, hash: head.hash },
      from: head.seq + 1,
      to: head.seq,
      reason: `the chain in Redis no longer holds record #${known.seq} as this writer saw it: records up to #${lost} were lost (Redis restored from an older snapshot) and another writer numbered its records as they were`,
    };
    this.emit(
      'warning',
      `the audit chain in Redis no longer holds record #${known.seq} as this Node-RED saw it (records lost and numbered again): run lh-audit verify and compare with the records lh-audit emitted`,
    );
  }

  private seal(fields: RecordFields[]): AuditRecord[] {
    const gap = this.gap;
    // after a declared gap the chain goes on above the highest record seen: seqs never go back
    let seq = gap ? gap.to : this.head ? this.head.seq : -1;
    let prev = this.head ? this.head.hash : GENESIS;
    const opening = (file: number): RecordFields => ({
      phase: 'file',
      at: new Date().toISOString(),
      instrument: this.options.instrument,
      file,
      ...(gap ? { gap } : {}),
    });
    const all: RecordFields[] = gap ? [opening(this.fileNo + 1), ...fields] : this.head ? fields : [opening(1), ...fields];
    return all.map((f) => {
      const record = seal(f, ++seq, prev);
      prev = record.hash;
      return record;
    });
  }

  private checkpointText(last: AuditRecord, file: number): string {
    const cp: Checkpoint = { seq: last.seq, hash: last.hash, file, at: last.at };
    return JSON.stringify(this.options.key ? { ...cp, mac: checkpointMac(this.options.key, cp) } : cp);
  }

  private async waitForReplicas(): Promise<void> {
    const wanted = this.options.waitReplicas ?? 0;
    if (wanted <= 0) return;
    const timeout = this.options.waitTimeoutMs ?? 1000;
    const acked = Number(
      await (this.options.redis as AuditRedis & { wait(n: number, ms: number): Promise<number> }).wait(wanted, timeout),
    );
    if (acked < wanted) {
      throw new Error(
        `only ${acked} of the ${wanted} Redis replicas asked for (lhAudit.redisWaitReplicas) acknowledged within ${timeout} ms`,
      );
    }
  }

  /** Waits for every append made so far (the connection belongs to the lh-coordination node and stays open). */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
  }
}
