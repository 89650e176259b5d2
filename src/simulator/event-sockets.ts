/**
 * The two websockets a real instrument serves beside interface A, under its path prefix:
 * `{prefix}/instinctevents` (run status, message boxes, finished, time remaining) and `{prefix}/instincterrors`
 * (runtime errors). Frames are JSON whose object values are JSON texts inside strings, nested: by default in the
 * observed casing `{code, description, data}` with camelCase names (what the hardware-tested client reads); the
 * strict simulator sends PascalCase (`{Code, Description, Data}`, no public source) so clients stay tolerant of both.
 * Connections are accepted with or without a bearer token, as the instrument does.
 */
import type * as http from 'http';
import type { Duplex } from 'stream';
import { WebSocket, WebSocketServer } from 'ws';

export type EventChannel = 'events' | 'errors';

export const CHANNEL_PATHS: Record<EventChannel, string> = { events: '/instinctevents', errors: '/instincterrors' };

/** One upgrade request the simulator accepted (tests check the token offered on it). */
export interface UpgradeRecord {
  channel: EventChannel;
  authorization?: string;
  time: number;
}

const MAX_UPGRADES = 1000;

/** `observed`: `{code, description, data}` with camelCase names (the tested client); `pascal`: `{Code, ...}`. */
export type FrameCasing = 'observed' | 'pascal';

/**
 * `{"code":..,"description":..,"data":"<json>"}` (or PascalCase) where data's object values are JSON texts again,
 * as the instrument sends them (several levels of JSON inside strings).
 */
export function nestedFrame(code: string, description: string, data: unknown, casing: FrameCasing = 'observed'): string {
  if (casing === 'observed') return JSON.stringify({ code, description, data: JSON.stringify(nestValues(data)) });
  return JSON.stringify({ Code: code, Description: description, Data: JSON.stringify(nestValues(pascal(data))) });
}

function nestValues(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = typeof v === 'object' && v !== null ? JSON.stringify(nestValues(v)) : v;
  return out;
}

function pascal(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pascal);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k.length > 0 ? k[0].toUpperCase() + k.slice(1) : k] = pascal(v);
  return out;
}

export class EventSockets {
  private readonly server = new WebSocketServer({ noServer: true, clientTracking: false });
  private readonly clients: Record<EventChannel, Set<WebSocket>> = { events: new Set(), errors: new Set() };
  private readonly paths: Record<string, EventChannel>;
  readonly upgrades: UpgradeRecord[] = [];
  /** hostile instrument (tests): accept each upgrade and close the connection at once */
  closeAtOnce = false;

  constructor(prefix: string) {
    this.paths = {
      [`${prefix}${CHANNEL_PATHS.events}`.toLowerCase()]: 'events',
      [`${prefix}${CHANNEL_PATHS.errors}`.toLowerCase()]: 'errors',
    };
  }

  /** Serves the websockets on `server`'s upgrade requests; any other upgrade path is answered 404. */
  attach(server: http.Server): void {
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
  }

  /** Sends one frame to every client of `channel`; returns how many got it. */
  publish(channel: EventChannel, frame: string): number {
    return this.publishRaw(channel, frame);
  }

  /** Sends one frame as given (any text or bytes, e.g. an oversized one) to every client of `channel`. */
  publishRaw(channel: EventChannel, frame: string | Buffer): number {
    let sent = 0;
    for (const ws of this.clients[channel]) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      ws.send(frame);
      sent++;
    }
    return sent;
  }

  /** Open connections per channel. */
  get counts(): Record<EventChannel, number> {
    return { events: this.clients.events.size, errors: this.clients.errors.size };
  }

  /** Drops every connection without a closing handshake, as a network failure would. */
  dropAll(): number {
    let dropped = 0;
    for (const set of Object.values(this.clients)) {
      for (const ws of set) {
        ws.terminate();
        dropped++;
      }
      set.clear();
    }
    return dropped;
  }

  private upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const pathname = new URL(req.url ?? '/', 'http://simulator.invalid').pathname.replace(/\/+$/, '').toLowerCase();
    const channel = this.paths[pathname];
    if (!channel) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const authorization = req.headers.authorization;
    this.upgrades.push({ channel, authorization, time: Date.now() });
    if (this.upgrades.length > MAX_UPGRADES) this.upgrades.splice(0, this.upgrades.length - MAX_UPGRADES);
    this.server.handleUpgrade(req, socket, head, (ws) => {
      if (this.closeAtOnce) {
        ws.close(1011, 'closing at once');
        return;
      }
      this.clients[channel].add(ws);
      ws.on('close', () => this.clients[channel].delete(ws));
      ws.on('error', () => ws.terminate());
    });
  }
}
