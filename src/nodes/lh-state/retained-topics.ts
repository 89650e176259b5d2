/**
 * The document topics of one Node-RED's state nodes, kept across redeploys (the registry is the caller's, one per
 * process): which topic a node published on before it was restarted (its lh-server renamed: the old one is cleared)
 * and whether another running node publishes on a topic (its document must not be cleared).
 */
export class RetainedTopics {
  /** the topic of each state node running now, by node id */
  private readonly running = new Map<string, string>();
  /** the topic each state node last published on, by node id, kept while the node is in the flows */
  private readonly published = new Map<string, string>();
  /**
   * a topic each state node moved away from and has not cleared yet, by node id: only the Node-RED that emits clears,
   * and a rename restarts the lh-server, whose lease may be another replica's for a while (until it is cleared, across
   * later redeploys too)
   */
  private readonly owed = new Map<string, string>();

  /** A state node started on `topic`: the topic it moved away from and still owes a clear, if any. */
  started(id: string, topic: string): string | undefined {
    const before = this.published.get(id);
    this.published.set(id, topic);
    this.running.set(id, topic);
    if (before !== undefined && before !== topic) this.owed.set(id, before);
    if (this.owed.get(id) === topic) this.owed.delete(id); // moved back: that topic is its own again
    return this.owed.get(id);
  }

  /** The topic a state node still owes a clear (see started). */
  owedBy(id: string): string | undefined {
    return this.owed.get(id);
  }

  /** The owed topic cleared (or another state node publishes there now). */
  cleared(id: string): void {
    this.owed.delete(id);
  }

  /** A state node that could not start (its lh-server deleted): the topic it published on before, forgotten. */
  orphaned(id: string): string | undefined {
    const before = this.published.get(id);
    this.published.delete(id);
    this.owed.delete(id);
    return before;
  }

  stopped(id: string, removed: boolean): void {
    this.running.delete(id);
    if (removed) {
      this.published.delete(id);
      this.owed.delete(id);
    }
  }

  /** Whether a running state node other than `id` publishes on `topic`. */
  inUse(topic: string, id: string): boolean {
    for (const [other, t] of this.running) if (other !== id && t === topic) return true;
    return false;
  }
}
