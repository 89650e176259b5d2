/**
 * With coordination: the locks applies of a plan take on the instrument's protocols, shared with the other Node-REDs
 * (src/coordination/apply-locks.ts; the instrument's home holds them, src/instrument), so two Node-REDs never write
 * one protocol at once.
 */
export interface ProtocolApplyLocks {
  /**
   * Takes the lock of protocol `protocolId` before the apply reads its base; throws an LhError when another Node-RED
   * holds it (kind `busy`) or Redis cannot be reached (kind `network`): the apply writes nothing then.
   */
  take(protocolId: number, operation: string): Promise<HeldApplyLock>;
}

/** A lock an apply holds (renewed while it runs). */
export interface HeldApplyLock {
  /** Before each write: resolves while the lock is still this apply's; throws an LhError saying why once it was lost. */
  confirm(): Promise<void>;
  /** Gives it back (never throws: a lock not given back expires). */
  release(): Promise<void>;
}
