/** Promises tracked until they settle (a rejection counts as settled): what close() must wait for. */
export class PendingWork {
  private readonly pending = new Set<Promise<void>>();

  add(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
  }

  /** Resolves once everything added so far, and anything added while waiting, has settled. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
