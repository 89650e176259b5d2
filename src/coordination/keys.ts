import { createHash } from 'crypto';

import { instrumentIdentity } from './instrument-identity';

/**
 * Where one coordination group keeps its state: every key starts with the configured prefix, so several labs (or
 * test runs) share a Redis without touching each other's keys, and nothing here ever deletes by pattern.
 */
export class CoordinationKeys {
  constructor(readonly prefix: string) {}

  /** The live replicas (sorted set: replica → heartbeat expiry, Redis clock). */
  get replicas(): string {
    return `${this.prefix}:replicas`;
  }

  /** The group's epoch: a random value set when the group first meets in this Redis (gone when Redis lost its data). */
  get epoch(): string {
    return `${this.prefix}:epoch`;
  }

  /** How many leases each replica holds (hash: replica → count, as of its last round). */
  get holding(): string {
    return `${this.prefix}:holding`;
  }

  /** The instruments any live replica knows (sorted set: instrument id → until when, Redis clock): the group's count. */
  get instruments(): string {
    return `${this.prefix}:instruments`;
  }

  /**
   * The keys of one instrument (its identity, see instrument-identity.ts, hashed: URLs are long and may hold odd
   * characters): every spelling of one instrument's URLs names the same keys.
   */
  instrument(instrumentKey: string): InstrumentKeys {
    return this.instrumentById(createHash('sha256').update(instrumentIdentity(instrumentKey)).digest('hex').slice(0, 24));
  }

  /** The keys of one instrument by its id (the first 24 hex digits of the SHA-256 of its identity). */
  instrumentById(id: string): InstrumentKeys {
    // the id in braces is a Redis Cluster hash tag: every key of one instrument lives in one slot (scripts need that)
    const base = `${this.prefix}:i:{${id}}`;
    return {
      id,
      lease: `${base}:lease`,
      watchers: `${base}:watchers`,
      fence: `${base}:fence`,
      seq: `${base}:seq`,
      ledger: (source: string) => `${base}:ledger:${source}`,
      dueAt: `${base}:defaults:due`,
      dueBody: `${base}:defaults:body`,
      shared: (name: string) => `${base}:shared:${name}`,
      users: (name: string) => `${base}:users:${name}`,
      registration: (name: string) => `${base}:registration:${name}`,
      applyLock: (protocolId: number) => `${base}:apply:${protocolId}`,
      settingsLock: `${base}:settings-lock`,
      audit: `${base}:audit`,
      auditHead: `${base}:audit:head`,
      auditCheckpoint: `${base}:audit:checkpoint`,
    };
  }
}

export interface InstrumentKeys {
  id: string;
  lease: string;
  /** the live replicas that know this instrument (sorted set: replica → until when, Redis clock) */
  watchers: string;
  fence: string;
  /** the write sequence of the shared seen-stores: bumped by every write; lower than a replica knew → writes lost */
  seq: string;
  ledger(source: string): string;
  dueAt: string;
  dueBody: string;
  shared(name: string): string;
  users(name: string): string;
  /** who uses a shared registration (zset: replica → since when), see USERS */
  registration(name: string): string;
  /** The lock an apply of a plan to protocol `protocolId` holds while it writes (lh-protocol, see apply-locks.ts). */
  applyLock(protocolId: number): string;
  /** The lock a set of software settings holds while it reads, merges and writes them (lh-settings, apply-locks.ts). */
  settingsLock: string;
  /** The audit chain (a stream, one entry per record), its head (`<seq> <hash>`) and its signed checkpoint. */
  audit: string;
  auditHead: string;
  auditCheckpoint: string;
}

export { validPrefix } from './prefix';
