/**
 * The floor of a fleet's detection on this machine (issue 31): the least a client can do to see each injected error,
 * with no Node-RED and no package. Per simulator it logs in once, keeps one keep-alive socket and the instincterrors
 * websocket open, and on a `RuntimeError` frame either takes the error from the frame (a firmware error: never
 * listed) or lists `check-for-pending-errors` (one list in flight per instrument, frames meanwhile fold into one more,
 * as lh-error-poll does) and takes the ids it has not seen. No safety-net poll, no msg, no memory file, no deck
 * photo, no lab events, no audit: everything lh-error-poll does on top of this is left out, so the same simulators and
 * injections measured with it give a lower bound for the node's detection times (bench/fleet.ts, part `floor`).
 */
import http from 'http';

import { WebSocket } from 'ws';

import type { Detection } from './detections';
import { preciseNow } from './report';
import type { SimAddress } from './sim-protocol';

const CREDENTIALS = JSON.stringify({ username: 'admin', password: 'labwire' });
const RECONNECT_MS = 100;

/** One request on `agent`, its body parsed as JSON. */
function requestJson(
  agent: http.Agent,
  url: string,
  method: string,
  headers: http.OutgoingHttpHeaders,
  body?: string,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if ((res.statusCode ?? 0) >= 300) reject(new Error(`${method} ${url}: ${String(res.statusCode)}`));
        else {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
          } catch (err) {
            reject(err as Error);
          }
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A frame's `{code, data}`, its data unwrapped from the JSON string it travels in (the simulator's observed shape). */
function readFrame(text: string): { code: string; data: Record<string, unknown> } | undefined {
  try {
    const frame = JSON.parse(text) as { code?: unknown; data?: unknown };
    const data = typeof frame.data === 'string' ? (JSON.parse(frame.data) as unknown) : frame.data;
    if (typeof frame.code !== 'string' || typeof data !== 'object' || data === null) return undefined;
    return { code: frame.code, data: data as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

class BareInstrument {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly seen = new Set<string>();
  private token = '';
  private socket?: WebSocket;
  private listing = false;
  private again = false;
  private closed = false;

  constructor(
    private readonly address: SimAddress,
    private readonly detect: (key: string) => void,
    private readonly heard: (key: string) => void,
    private readonly onFailure: (err: Error) => void,
  ) {}

  async start(): Promise<void> {
    const auth = (await requestJson(
      this.agent,
      `${this.address.baseUrl}/api/v1/authenticate`,
      'POST',
      { 'Content-Type': 'application/json', Accept: 'application/json' },
      CREDENTIALS,
    )) as { token: string };
    this.token = auth.token;
    await this.open();
  }

  private open(): Promise<void> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`${this.address.baseUrl.replace(/^http/, 'ws')}/instincterrors`);
      this.socket = ws;
      ws.on('open', () => {
        resolve();
        void this.list(); // what came while the socket was down
      });
      ws.on('message', (data: Buffer) => this.onFrame(data.toString('utf8')));
      ws.on('error', () => undefined);
      ws.on('close', () => {
        resolve();
        if (!this.closed) setTimeout(() => void this.open(), RECONNECT_MS);
      });
    });
  }

  private onFrame(text: string): void {
    const frame = readFrame(text);
    if (frame?.code !== 'RuntimeError') return;
    this.heard(String(frame.data.id));
    if (frame.data.source === 'Firmware') this.take(String(frame.data.id));
    else void this.list();
  }

  private take(id: string): void {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.detect(id);
  }

  /** Lists the pending errors (resolves when done); one list in flight, frames meanwhile fold into one more. */
  list(): Promise<void> {
    if (this.listing) {
      this.again = true;
      return Promise.resolve();
    }
    this.listing = true;
    return requestJson(this.agent, `${this.address.baseUrl}/api/v1/errors/check-for-pending-errors`, 'GET', {
      Authorization: `Bearer ${this.token}`,
      Accept: 'application/json',
    })
      .then((errors) => {
        for (const e of errors as { id: string }[]) this.take(e.id);
      }, this.onFailure)
      .finally(() => {
        this.listing = false;
        if (this.again && !this.closed) {
          this.again = false;
          void this.list();
        }
      });
  }

  close(): void {
    this.closed = true;
    this.socket?.terminate();
    this.agent.destroy();
  }
}

/** The bare client of a whole fleet: its detections (the error's id, when it was seen) and its failed requests. */
export class BareFleetClient {
  readonly detections: Detection[] = [];
  /** each raising frame (the error's id, when it arrived) */
  readonly frames: Detection[] = [];
  failures = 0;
  private readonly instruments: BareInstrument[];

  private constructor(addresses: SimAddress[]) {
    this.instruments = addresses.map(
      (a) =>
        new BareInstrument(
          a,
          (key) => this.detections.push({ key, time: preciseNow() }),
          (key) => this.frames.push({ key, time: preciseNow() }),
          () => this.failures++,
        ),
    );
  }

  static async connect(addresses: SimAddress[]): Promise<BareFleetClient> {
    const client = new BareFleetClient(addresses);
    await Promise.all(client.instruments.map((i) => i.start()));
    return client;
  }

  /**
   * One list on every instrument, at once: the keep-alive sockets are fresh when the window starts, as the node's
   * (its safety-net polls keep them in use; an idle socket is closed by the simulator after 5 s).
   */
  async warm(): Promise<void> {
    await Promise.all(this.instruments.map((i) => i.list()));
  }

  close(): void {
    for (const i of this.instruments) i.close();
  }
}
