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
  /**
   * Takes the lock of the instrument's software settings before a set reads them (a merge is a read-modify-write):
   * waits while another Node-RED holds it (at most `waitMs`), then throws an LhError (kind `busy`); kind `network`
   * when Redis cannot be reached. The set writes nothing then.
   */
  takeSettings(operation: string, waitMs?: number): Promise<HeldApplyLock>;
}

/** A lock an apply holds (renewed while it runs). */
export interface HeldApplyLock {
  /** Before each write: resolves while the lock is still this apply's; throws an LhError saying why once it was lost. */
  confirm(): Promise<void>;
  /** Gives it back (never throws: a lock not given back expires). */
  release(): Promise<void>;
}
