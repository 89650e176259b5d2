/**
 * The order of one chain's records around a flow (moved out of the transport, issue 30 point 1): an outcome record is
 * appended once the caller has the answer (a setImmediate later: after the caller's microtasks and the next request
 * it sends), or before the chain's next intent, whichever comes first. So the answer goes back without the record's
 * sealing and write ahead of it, and the chain keeps a flow's order: the outcome of an action before the intent of
 * the action that followed it, through whichever lh-server node of the instrument (they share one chain, so one
 * order: AuditChains gives their trails the same OutcomeOrder).
 */

/** Node's own setImmediate, taken when this module loads: a test's fake clock installed later cannot hold it. */
const nodeSetImmediate = setImmediate;

export class OutcomeOrder {
  private readonly deferred: (() => void)[] = [];

  /** Appends `append` (an outcome record) after the caller's step, or at the next flush(); settles with it. */
  defer(append: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.deferred.push(() => {
        try {
          append().then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      });
      if (this.deferred.length === 1) nodeSetImmediate(() => this.flush());
    });
  }

  /** Appends every outcome deferred so far, in the order they came (before an intent, so it follows them). */
  flush(): void {
    for (const append of this.deferred.splice(0)) append();
  }
}
