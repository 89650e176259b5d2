import { canonicalJson, GENESIS, hmacHex, sha256Hex } from './canonical';

export const RECORD_VERSION = 1;

/** Who caused an action: the first of these that is known is the one a reader looks at. */
export interface Actor {
  /** The httpNodeAuth / adminAuth user, when Node-RED authenticated one. */
  user?: string;
  /** The name typed on the answer page (the signer) and what the answer means (the response chosen). */
  signer?: string;
  meaning?: string;
  /** The lh-error-policy rule that chose the answer. */
  rule?: string;
  /** The node and flow the request came from. */
  node?: string;
  nodeType?: string;
  flow?: string;
  /** The editor admin route (setup wizard, password change...). */
  route?: string;
  /** Why, where known: the error answered, the rule matched, the old value. */
  why?: unknown;
  /** The value the node read before changing it (settings merge, routine update). */
  old?: unknown;
}

/** The actor without the why and old value, which a record keeps beside it. */
export type Who = Omit<Actor, 'why' | 'old'>;

export type OutcomeResult = 'applied' | 'refused' | 'unknown' | 'not-sent';

export interface Outcome {
  result: OutcomeResult;
  status?: number;
  reason?: string;
  attempts?: number;
}

export interface What {
  api: 'A' | 'B';
  method: string;
  operation: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** SHA-256 of the (redacted, canonical) body when it is too large to keep in the record. */
  bodySha256?: string;
  bodyOmitted?: boolean;
}

/** What a caller gives; seq, prev and hash are added when the record joins the chain. */
export type RecordFields =
  | {
      phase: 'intent';
      id: string;
      at: string;
      instrument: string;
      who: Who;
      what: What;
      /** Why, where known: the error answered. */
      why?: unknown;
      /** The value before the change, where the node read it (settings merge, routine update): old -> what.body. */
      old?: unknown;
    }
  | { phase: 'outcome'; id: string; at: string; instrument: string; operation: string; outcome: Outcome }
  | { phase: 'file'; at: string; instrument: string; file: number; gap?: ChainGap };

/**
 * Said by the record that opens a file when the chain's records before it are missing: the writer found its checkpoint
 * naming a record that no file holds any more (a chain file deleted, moved or cut short). The chain goes on from the
 * record the checkpoint named (its prev is that record's hash), so what the signed checkpoint vouched for still links;
 * `lh-audit verify` reports the gap, never a complete chain.
 */
export interface ChainGap {
  /** The last record the chain's files still hold before the gap; null when no record before it is left. */
  after: { seq: number; hash: string } | null;
  /** The first and the last seq of the records missing. */
  from: number;
  to: number;
  reason: string;
}

export type AuditRecord = RecordFields & { v: number; seq: number; prev: string; hash: string };

/** The hash of a record: SHA-256 over its canonical JSON without the hash itself (prev is part of it). */
export function hashOf(record: Omit<AuditRecord, 'hash'> | AuditRecord): string {
  const { hash: _hash, ...rest } = record as AuditRecord;
  return sha256Hex(canonicalJson(rest));
}

export function seal(fields: RecordFields, seq: number, prev: string): AuditRecord {
  const unsealed = { v: RECORD_VERSION, seq, prev, ...fields };
  return { ...unsealed, hash: hashOf(unsealed) } as AuditRecord;
}

/** The signed checkpoint kept beside a chain: a removed tail shows as a checkpoint beyond the last record. */
export interface Checkpoint {
  seq: number;
  hash: string;
  file: number;
  at: string;
  mac?: string;
}

export function checkpointMac(key: Buffer, cp: Pick<Checkpoint, 'seq' | 'hash' | 'file'>): string {
  return hmacHex(key, `lh-audit-checkpoint|${cp.seq}|${cp.file}|${cp.hash}`);
}

export { GENESIS };
