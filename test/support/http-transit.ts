/**
 * HTTP in transit, for tests that drive a client on a fake clock against a server in the same process: a request
 * is "in transit" from the client's start until the server has it, and from the server's answer until the client
 * has the response (Node's `http` diagnostics channels). A test advances fake time only when nothing is in transit,
 * so real I/O never races the client's fake deadline, however busy the machine is.
 */
import diagnostics from 'node:diagnostics_channel';

const CHANNELS = {
  clientStart: 'http.client.request.start',
  clientError: 'http.client.request.error',
  clientDone: 'http.client.response.finish',
  serverStart: 'http.server.request.start',
  serverDone: 'http.server.response.finish',
} as const;

export class HttpTransit {
  private client = 0; // client requests started and not yet answered or failed
  private server = 0; // requests the server has received and not yet answered
  private readonly listeners: [string, () => void][] = [
    [CHANNELS.clientStart, () => void this.client++],
    [CHANNELS.clientError, () => void this.client--],
    [CHANNELS.clientDone, () => void this.client--],
    [CHANNELS.serverStart, () => void this.server++],
    [CHANNELS.serverDone, () => void this.server--],
  ];

  constructor() {
    for (const [name, fn] of this.listeners) diagnostics.subscribe(name, fn);
  }

  /** Requests on the wire: sent but not yet at the server, or answered but not yet at the client. */
  get inTransit(): number {
    return Math.max(0, this.client - this.server);
  }

  /**
   * Resolves when `work` settles, or when nothing has been in transit for two real checks `stepMs` apart (the work
   * then waits on a fake timer, or on a server that waits on one). `capMs` (real) bounds a stuck wait.
   */
  async quiet(work: Promise<unknown> | undefined, realSetTimeout: typeof setTimeout, stepMs = 10, capMs = 30000): Promise<void> {
    if (!work) return;
    let settled = false;
    void work.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let i = 0; i < 3 && !settled; i++) await new Promise((r) => setImmediate(r)); // work that needs no I/O
    let idleChecks = 0;
    for (let waited = 0; !settled && waited < capMs && idleChecks < 2; waited += stepMs) {
      await new Promise((r) => realSetTimeout(r, stepMs));
      idleChecks = this.inTransit === 0 ? idleChecks + 1 : 0;
    }
  }

  close(): void {
    for (const [name, fn] of this.listeners) diagnostics.unsubscribe(name, fn);
  }
}
