/**
 * The HTTP plumbing of the simulator: the plain HTTP server of interface A and the HTTPS server of interface B
 * (the bundled throwaway CA, mutual TLS when a client CA is given), their sockets, listening and closing.
 */
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import * as path from 'path';

import type { AddressInfo, Socket } from 'net';

export type Api = 'A' | 'B';
export type RequestHandler = (api: Api, req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface TlsFiles {
  key: string;
  cert: string;
  /** when set, interface B asks for a client certificate signed by it */
  clientCa?: string;
}

export function certPath(name: 'ca.pem' | 'server.pem' | 'server-key.pem'): string {
  return path.join(__dirname, 'certs', name);
}

/** The server key and certificate of interface B. */
export function serverTls(clientCa: string | undefined): TlsFiles {
  return {
    key: fs.readFileSync(certPath('server-key.pem'), 'utf8'),
    cert: fs.readFileSync(certPath('server.pem'), 'utf8'),
    clientCa,
  };
}

/** The two servers; start() and close() may be called again (a restart keeps the ports). */
export class ServerPair {
  private httpServer?: http.Server;
  private httpsServer?: https.Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly tls: TlsFiles,
    private readonly handle: RequestHandler,
  ) {}

  /** Listens on both ports (0: a free one); `beforeListen` may attach to the A server (websockets). */
  async start(
    host: string,
    ports: { port: number; httpsPort: number },
    beforeListen: (a: http.Server) => void,
  ): Promise<{ port: number; httpsPort: number }> {
    const a = http.createServer((req, res) => this.handle('A', req, res));
    const mutual = this.tls.clientCa ? { requestCert: true, rejectUnauthorized: true, ca: this.tls.clientCa } : {};
    const b = https.createServer({ key: this.tls.key, cert: this.tls.cert, ALPNProtocols: ['http/1.1'], ...mutual }, (req, res) =>
      this.handle('B', req, res),
    );
    for (const server of [a, b]) {
      server.keepAliveTimeout = 5_000;
      server.on('connection', (socket: Socket) => {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
      });
      server.on('clientError', (_err, socket: Socket) => socket.destroy());
    }
    beforeListen(a);
    try {
      const port = await listen(a, ports.port, host);
      this.httpServer = a;
      const httpsPort = await listen(b, ports.httpsPort, host);
      this.httpsServer = b;
      return { port, httpsPort };
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  /** Closes both servers and destroys every open socket. */
  async close(): Promise<void> {
    const servers = [this.httpServer, this.httpsServer].filter((s): s is http.Server | https.Server => s !== undefined);
    this.httpServer = undefined;
    this.httpsServer = undefined;
    const closed = servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve())));
    for (const s of servers) s.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await Promise.all(closed);
    // 'close' is emitted before libuv has released the handles; they are gone after the loop's close phase
    if (servers.length > 0) await afterClosePhase();
  }
}

function afterClosePhase(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setTimeout(resolve, 0)));
}

/**
 * The first port of the kernel's ephemeral range (outgoing connections and servers on port 0 take theirs from it):
 * /proc/sys/net/ipv4/ip_local_port_range, 32768 where it cannot be read.
 */
export function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 1024 ? low : 32768;
  } catch {
    return 32768;
  }
}

/** The lowest port a simulator asked for any port picks from (below the ephemeral range). */
export const OWN_RANGE_LOW = 20000;
/** Ports tried in the range before the kernel is asked for one. */
const OWN_RANGE_TRIES = 40;
/**
 * The ports any-port starts of this process's simulators were given: never given again. A Node-RED in the same
 * process (the test runtime) knows an instrument by its URL and keeps its memory (held logins, answers given, errors
 * seen) across a redeploy; a later simulator on an earlier one's port would be taken for that instrument. With some
 * 600 random picks in 12,768 ports per test run, about a dozen such reuses happened per run (the likely cause of a
 * later test file's first request failing in one CI run).
 */
const givenPorts = new Set<number>();

/**
 * Listens on `port`; for any port (0), on a random free one below the kernel's ephemeral range: a simulator stopped
 * and started again on its port (an instrument restart, in tests and benches) would otherwise find it taken by an
 * outgoing connection of another process, which the kernel gives ephemeral ports. The kernel picks (0) when none of
 * OWN_RANGE_TRIES random ports is free or the range is empty. A port an earlier simulator of this process was given
 * is not given again (givenPorts).
 */
async function listen(server: http.Server | https.Server, port: number, host: string): Promise<number> {
  const high = ephemeralLow() - 1;
  if (port !== 0) return listenOn(server, port, host);
  for (let i = 0; i < OWN_RANGE_TRIES && high > OWN_RANGE_LOW; i++) {
    const candidate = OWN_RANGE_LOW + Math.floor(Math.random() * (high - OWN_RANGE_LOW + 1));
    if (givenPorts.has(candidate)) continue;
    try {
      return given(await listenOn(server, candidate, host));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  for (let i = 0; i < OWN_RANGE_TRIES; i++) {
    const kernels = await listenOn(server, 0, host);
    if (!givenPorts.has(kernels)) return given(kernels);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return listenOn(server, 0, host);
}

function given(port: number): number {
  givenPorts.add(port);
  return port;
}

function listenOn(server: http.Server | https.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.removeListener('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
