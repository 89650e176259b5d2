/**
 * A forwarding proxy in front of one simulator interface that can lose an answer AFTER the simulator has
 * processed the request (its socket to the client is destroyed instead of relaying the answer). The simulator's
 * own reset fault drops requests before they are processed; this one covers "it arrived, but the client saw a
 * failure", the case that tempts a client to send twice. It records what reached the simulator and with what
 * status, independently of the simulator's bounded request log.
 */
import http from 'http';
import https from 'https';
import { AddressInfo, Socket } from 'net';

export interface ProxiedRequest {
  method: string;
  path: string;
  body: string;
  /** the simulator's status; 0 when it sent none (reset, held, or down) */
  upstreamStatus: number;
  /** the answer was dropped on purpose after the simulator processed the request */
  lost: boolean;
  /** when the proxy received it, and when it answered or gave up (ms since the epoch; 0 = not yet) */
  at: number;
  end: number;
}

/** What to do with one request: forward it, drop it unprocessed, or lose the answer after processing. */
export type ProxyDecision = 'forward' | 'drop-before' | 'lose-after';

export interface LossyProxyOptions {
  target: string;
  /** for an https target: the CA that signs it, and the key and certificate the proxy serves with */
  tls?: { ca: string; key: string; cert: string };
}

export class LossyProxy {
  /** 0..1 share of processed answers that are dropped */
  lossRate = 0;
  /** When set, decides per request instead of lossRate (for deterministic fault sequences). */
  decide?: (req: ProxiedRequest) => ProxyDecision;
  /** Called once the simulator processed a request, before its answer is relayed or lost (the instrument moves on). */
  afterUpstream?: (req: ProxiedRequest) => void;
  readonly log: ProxiedRequest[] = [];
  private server?: http.Server | https.Server;
  private readonly sockets = new Set<Socket>();
  private readonly agent: http.Agent;
  private readonly target: URL;

  constructor(private readonly options: LossyProxyOptions) {
    this.target = new URL(options.target);
    this.agent = options.tls ? new https.Agent({ keepAlive: true, ca: options.tls.ca }) : new http.Agent({ keepAlive: true });
  }

  get url(): string {
    const port = (this.server?.address() as AddressInfo).port;
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => this.forward(req, res);
    const server = this.options.tls
      ? https.createServer({ key: this.options.tls.key, cert: this.options.tls.cert }, handler)
      : http.createServer(handler);
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    server.on('clientError', (_err, s: Socket) => s.destroy());
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.agent.destroy();
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const entry: ProxiedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        body: body.toString('utf8'),
        upstreamStatus: 0,
        lost: false,
        at: Date.now(),
        end: 0,
      };
      this.log.push(entry);
      const decision = this.decide?.(entry);
      if (decision === 'drop-before') {
        entry.end = Date.now();
        req.socket.destroy();
        return;
      }
      const headers = { ...req.headers, host: this.target.host };
      delete headers.connection;
      const send = this.options.tls ? https.request : http.request;
      const upstream = send({
        protocol: this.target.protocol,
        hostname: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers,
        agent: this.agent,
      });
      // the client gave up (its own timeout): stop waiting for the simulator too
      res.once('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      res.once('close', () => (entry.end = Date.now()));
      upstream.on('error', () => req.socket.destroy());
      upstream.on('response', (up) => {
        const parts: Buffer[] = [];
        up.on('data', (c: Buffer) => parts.push(c));
        up.on('error', () => req.socket.destroy());
        up.on('end', () => {
          entry.upstreamStatus = up.statusCode ?? 0;
          this.afterUpstream?.(entry);
          if (decision === 'lose-after' || (decision === undefined && Math.random() < this.lossRate)) {
            entry.lost = true;
            req.socket.destroy();
            return;
          }
          const out: http.OutgoingHttpHeaders = {};
          for (const [k, v] of Object.entries(up.headers)) {
            if (!['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(k) && v !== undefined) out[k] = v;
          }
          res.writeHead(up.statusCode ?? 502, out);
          res.end(Buffer.concat(parts));
        });
      });
      upstream.end(body);
    });
  }
}
