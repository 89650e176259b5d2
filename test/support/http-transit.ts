/**
 * HTTP in transit, for tests that drive a client on a fake clock against a server in the same process: a request
 * to the server's port is "in transit" from the client's start until the server has it, and from the server's answer
 * until the client has the response (Node's `http` diagnostics channels). A test advances fake time only when
 * nothing is in transit, so real I/O never races the client's fake deadline, however busy the machine is.
 * Requests are tracked one by one until they close (an aborted or failed one too), and only those of `port`:
 * other tests' connections in the same process never count.
 */
import diagnostics from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export class HttpTransit {
  /** client requests to the port, until the response arrived or the request closed */
  private readonly client = new Set<ClientRequest>();
  /** requests the server on the port has, until its answer is sent (or the connection closed) */
  private readonly server = new Set<ServerResponse>();
  private readonly onClientStart = (message: unknown): void => {
    const request = (message as { request: ClientRequest }).request;
    if (!String(request.getHeader('host') ?? '').endsWith(`:${this.port}`)) return;
    this.client.add(request);
    const done = (): void => void this.client.delete(request);
    request.once('response', (res: IncomingMessage) => (res.complete ? done() : res.once('end', done).once('close', done)));
    request.once('close', done);
  };
  private readonly onServerStart = (message: unknown): void => {
    const { response, socket } = message as { response: ServerResponse; socket: Socket };
    if (socket.localPort !== this.port) return;
    this.server.add(response);
    const done = (): void => void this.server.delete(response);
    response.once('finish', done).once('close', done);
  };

  constructor(private readonly port: number) {
    diagnostics.subscribe('http.client.request.start', this.onClientStart);
    diagnostics.subscribe('http.server.request.start', this.onServerStart);
  }

  /** Requests on the wire: sent but not yet at the server, or answered but not yet at the client. */
  get inTransit(): number {
    return Math.max(0, this.client.size - this.server.size);
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
    diagnostics.unsubscribe('http.client.request.start', this.onClientStart);
    diagnostics.unsubscribe('http.server.request.start', this.onServerStart);
  }
}

/**
 * The mocha hooks of a suite that drives clients on a fake clock against `sim` (a simulator of its own): starts it
 * and watches its port before the suite, stops both after. Returns the transit, there once the suite started.
 */
export function useSimulatorInTransit(sim: { baseUrl: string; start(): Promise<unknown>; stop(): Promise<unknown> }): {
  quiet: HttpTransit['quiet'];
  readonly inTransit: number;
} {
  let transit: HttpTransit | undefined;
  before(async function () {
    await sim.start();
    transit = new HttpTransit(Number(new URL(sim.baseUrl).port));
  });
  after(async function () {
    transit?.close();
    await sim.stop();
  });
  const started = (): HttpTransit => {
    if (!transit) throw new Error('the simulator is not started: use the transit inside the suite');
    return transit;
  };
  return {
    quiet: (...args) => started().quiet(...args),
    get inTransit() {
      return started().inTransit;
    },
  };
}
