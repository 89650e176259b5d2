/**
 * The instrument's live events: one websocket per channel beside interface A (`{baseUrl}/instinctevents`,
 * `{baseUrl}/instincterrors`), opened when the first listener subscribes and closed when the last one leaves
 * or the client closes. An instrument without sockets (404 or another refused upgrade) is reported once as
 * `unavailable`, so callers keep polling.
 * Reconnects start fast and back off only on repeated early closes (issue 31, see reconnectWaitMs): after a close the
 * first attempt goes after 25–75 ms (50 ms ±50 % jitter), attempts that do not reach the instrument double that;
 * a connection counts as established only once it proved useful by staying open `usefulAfterMs` (5 s), and the
 * second of such early closes in a row (an instrument that accepts the upgrade and closes at once, or sends a frame and
 * closes) starts the full back-off (3 s doubling to 30 s): such a socket is reopened a few times a minute, not a storm.
 * Attempts that get no HTTP answer at all (an instrument restarting or away: refused, reset, unreachable) wait at most
 * `reconnectUnreachableMaxMs` (3 s, as the tested client) however long it was away: a firmware error pushed once it is
 * back exists on the socket alone, and a socket still waiting out a 30 s back-off would never hear it.
 * Frames are capped at `maxFrameBytes` (1 MiB by default, like HTTP bodies); a larger one closes the connection and
 * is said once (`onNotice`).
 */
import { EventEmitter } from 'events';

import type { IncomingMessage } from 'http';
import { type ClientOptions, WebSocket } from 'ws';

import { eventFromFrame, type InstrumentEvent } from './event-frames';
import { type TlsOptions, trimBase } from './transport';

export type EventChannel = 'events' | 'errors';
export const EVENT_CHANNELS: readonly EventChannel[] = ['events', 'errors'];
const CHANNEL_PATHS: Record<EventChannel, string> = { events: '/instinctevents', errors: '/instincterrors' };

/**
 * `idle`: nobody listens; `connecting`: first attempt under way; `connected`; `disconnected`: lost or not reached,
 * retrying with back-off; `unavailable`: the instrument has no such socket (retried rarely, in silence); `closed`.
 */
export type EventConnectionState = 'idle' | 'connecting' | 'connected' | 'disconnected' | 'unavailable' | 'closed';

/** Said once per channel and client: something the user should know that is not a state (an oversized frame). */
export interface EventNotice {
  channel: EventChannel;
  message: string;
}

/** Frames larger than this are refused (the connection closes with 1009), like HTTP bodies over 1 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024;
/** A connection open this long has proved useful: losing it later is a drop (quick reconnect), not a failed attempt. */
export const DEFAULT_USEFUL_AFTER_MS = 5_000;
/** The longest an upgrade waits for the session's token (a login under way) before it connects without one. */
export const DEFAULT_TOKEN_WAIT_MS = 2000;
/** The first reconnect delay after a close (±50 % jitter: 25–75 ms). */
export const DEFAULT_RECONNECT_FIRST_MS = 50;
/** Where the back-off starts after repeated early closes. */
export const DEFAULT_RECONNECT_INITIAL_MS = 3000;
/**
 * The longest wait after attempts that got no HTTP answer (while at most FAST_EARLY_CLOSES connections closed early):
 * the tested client's 3 s. Such an attempt costs the instrument nothing (it is not there, or not listening yet).
 */
export const DEFAULT_RECONNECT_UNREACHABLE_MAX_MS = 3000;
/** Early closes in a row that still reconnect fast: one may be a fluke (the instrument restarting its server). */
export const FAST_EARLY_CLOSES = 1;

/** What state listeners hear: only `connected`, `disconnected` and `unavailable`, each once per change. */
export interface EventStateChange {
  channel: EventChannel;
  state: 'connected' | 'disconnected' | 'unavailable';
  /** why, for disconnected and unavailable (never a token) */
  reason?: string;
}

export type EventListener = (event: InstrumentEvent) => void;
export type StateListener = (change: EventStateChange) => void;
export type NoticeListener = (notice: EventNotice) => void;

export interface EventStreamOptions {
  baseUrl: string;
  tls?: TlsOptions;
  /** The bearer token to offer on the upgrade; undefined, a failure or no answer within tokenWaitMs: connect without one. */
  token?: () => Promise<string | undefined>;
  /** how long an upgrade waits for `token` (a login under way), default 2000 ms; then it connects without one */
  tokenWaitMs?: number;
  /**
   * where the back-off starts once connections closed early (before proving useful) twice in a row, default 3000 ms;
   * doubled per further early close or attempt that fails
   */
  reconnectInitialMs?: number;
  /**
   * the first reconnect delay after a close, default 50 ms with ±50 % jitter (25–75 ms), doubled per attempt that
   * does not reach the instrument (one restarting, or really down: 0.2, 0.4, 0.8 … s up to `reconnectMaxMs`)
   */
  reconnectAfterDropMs?: number;
  /** reconnect delay cap, default 30000 ms; also the interval of the silent retries while unavailable */
  reconnectMaxMs?: number;
  /**
   * the cap while attempts get no HTTP answer at all (refused, reset, unreachable: an instrument restarting), default
   * 3000 ms: the socket is back within seconds of the instrument; an answered refusal and early closes keep reconnectMaxMs
   */
  reconnectUnreachableMaxMs?: number;
  /**
   * a ping this often; neither a pong nor a frame by the next one drops the connection (reconnect): an instrument
   * that never answers pings keeps a socket that delivers frames. Default 30000 ms, 0 = off
   */
  pingIntervalMs?: number;
  /**
   * a connection proves useful by staying open this long (default 5000 ms, the default poll interval: a socket that
   * lasts longer costs at most one reconnect poll per interval); the second in a row closed before that starts the
   * back-off from reconnectInitialMs, whatever it delivered
   */
  usefulAfterMs?: number;
  /** largest frame accepted, default 1 MiB; a larger one closes the connection (and is said once) */
  maxFrameBytes?: number;
  /** upgrade handshake deadline, default 10000 ms */
  handshakeTimeoutMs?: number;
  /** 0..1 for the ±20 % jitter of reconnect delays (tests pass () => 0.5 for exact delays) */
  random?: () => number;
}

/** HTTP answers to the upgrade that mean "no socket here", not "try again soon". */
export function isUnavailableStatus(status: number): boolean {
  if (status === 501) return true;
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** The wait before reconnect attempt `failures + 1`: initial × 2^failures, capped, with ±20 % jitter. */
export function reconnectDelay(failures: number, initialMs: number, maxMs: number, random: () => number): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(failures, 20));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Since the last connection that proved useful (or the first attempt): what went wrong, in a row. */
export interface ReconnectHistory {
  /** connections that opened and closed before proving useful (or refused an oversized frame) */
  earlyCloses: number;
  /** attempts that never opened (refused, unreachable, handshake failed) */
  failures: number;
  /** the last of those got no HTTP answer (refused, reset, unreachable, timed out): the instrument is away */
  unanswered?: boolean;
}

export interface ReconnectTimings {
  firstMs: number;
  initialMs: number;
  maxMs: number;
  /** the cap of the fast path after an unanswered attempt (default DEFAULT_RECONNECT_UNREACHABLE_MAX_MS) */
  unreachableMaxMs?: number;
}

/**
 * The wait before the next attempt: fast (firstMs ±50 %, then doubled per failed attempt, ±20 %, up to unreachableMaxMs
 * when the last attempt got no HTTP answer) while at most FAST_EARLY_CLOSES connections closed early in a row;
 * beyond, the back-off from initialMs (±20 %), doubled per further early close or failed attempt. Always capped at maxMs (+20 %). Pure: the client and the tests share it.
 */
export function reconnectWaitMs(history: ReconnectHistory, t: ReconnectTimings, random: () => number): number {
  if (history.earlyCloses <= FAST_EARLY_CLOSES) {
    // the first wait spreads a fleet's reconnects (±50 %); the doubling ones keep the usual ±20 %
    if (history.failures === 0) return Math.round(Math.min(t.maxMs, t.firstMs) * (0.5 + random()));
    // the instrument away (no HTTP answer): tried every few seconds, so a restart of any length is heard at once after
    const cap = history.unanswered ? Math.min(t.maxMs, t.unreachableMaxMs ?? DEFAULT_RECONNECT_UNREACHABLE_MAX_MS) : t.maxMs;
    return reconnectDelay(history.failures, t.firstMs, cap, random);
  }
  return reconnectDelay(history.earlyCloses - FAST_EARLY_CLOSES - 1 + history.failures, t.initialMs, t.maxMs, random);
}

/** `ws://` or `wss://` URL of a channel, keeping the base URL's path prefix. */
export function eventSocketUrl(baseUrl: string, channel: EventChannel): string {
  const u = new URL(trimBase(baseUrl));
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.username = '';
  u.password = '';
  u.search = '';
  u.hash = '';
  return `${trimBase(u.toString())}${CHANNEL_PATHS[channel]}`;
}

class ChannelConnection {
  state: EventConnectionState = 'idle';
  /** the last change reported since the channel was opened (new listeners of a shared socket read it) */
  lastChange?: EventStateChange;
  readonly listeners = new Set<EventListener>();
  private ws?: WebSocket;
  private retryTimer?: NodeJS.Timeout;
  private pingTimer?: NodeJS.Timeout;
  /** what went wrong in a row since the last connection that proved useful (reconnectWaitMs) */
  private history: ReconnectHistory = { earlyCloses: 0, failures: 0 };
  /** bumped whenever the connection is stopped: an attempt from before sees it and gives up */
  private generation = 0;
  private closing?: Promise<void>;
  /** the oversized-frame notice was given (once per channel and client) */
  private saidTooLarge = false;
  /** ends the wait of an upgrade for the session's token (stop: no timer of a stopped connection is left) */
  private endTokenWait?: () => void;

  constructor(
    readonly channel: EventChannel,
    private readonly url: string,
    private readonly options: EventStreamOptions,
    private readonly report: (change: EventStateChange) => void,
    private readonly notice: (notice: EventNotice) => void = () => undefined,
  ) {}

  add(listener: EventListener): void {
    this.listeners.add(listener);
    if (this.state === 'idle') {
      this.state = 'connecting';
      void this.connect(this.generation);
    }
  }

  remove(listener: EventListener): void {
    if (this.listeners.delete(listener) && this.listeners.size === 0) void this.stop('idle');
  }

  /** Drops the socket and every timer; `idle` may be started again, `closed` not. */
  stop(next: 'idle' | 'closed'): Promise<void> {
    this.generation++;
    this.state = next;
    this.lastChange = undefined;
    this.history = { earlyCloses: 0, failures: 0 };
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.endTokenWait?.(); // the attempt waiting for a token gives up now (its generation is gone), not 2 s later
    this.stopPing();
    const ws = this.ws;
    this.ws = undefined;
    if (!ws) return this.closing ?? Promise.resolve();
    const closed = new Promise<void>((resolve) => {
      if (ws.readyState === WebSocket.CLOSED) resolve();
      else ws.once('close', () => resolve());
    });
    ws.terminate();
    this.closing = closed;
    return closed;
  }

  private async connect(generation: number): Promise<void> {
    const token = await this.offeredToken();
    if (generation !== this.generation) return;
    const tls = this.options.tls ?? {};
    // every TLS option HTTP gets (pfx, ALPN, ciphers, servername, …): ws passes them on to tls.connect
    const wsOptions: ClientOptions & TlsOptions = {
      ...tls,
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      handshakeTimeout: this.options.handshakeTimeoutMs ?? 10000,
      perMessageDeflate: false,
      followRedirects: false,
      rejectUnauthorized: tls.rejectUnauthorized !== false,
      maxPayload: this.maxFrameBytes,
    };
    const ws = new WebSocket(this.url, wsOptions);
    this.ws = ws;
    let refusedStatus: number | undefined;
    let lastError: string | undefined;
    /** the connection stayed open usefulAfterMs: a drop then is a drop, not a failed attempt */
    let useful = false;
    let opened = false;
    let tooLarge = false;
    let usefulTimer: NodeJS.Timeout | undefined;
    const proveUseful = (): void => {
      clearTimeout(usefulTimer);
      if (useful || generation !== this.generation) return;
      useful = true;
      this.history = { earlyCloses: 0, failures: 0 };
    };
    ws.on('unexpected-response', (_req, res: IncomingMessage) => {
      refusedStatus = res.statusCode;
      res.resume();
      ws.terminate();
    });
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
        tooLarge = true;
        lastError = `a frame larger than ${formatBytes(this.maxFrameBytes)} was refused (the frame cap)`;
        this.sayTooLarge(lastError);
        return;
      }
      lastError = err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message;
    });
    ws.on('open', () => {
      if (generation !== this.generation) return;
      opened = true;
      // failures are forgiven only once the connection proved useful (see proveUseful)
      usefulTimer = setTimeout(proveUseful, this.options.usefulAfterMs ?? DEFAULT_USEFUL_AFTER_MS);
      this.setState('connected');
      this.startPing(ws);
    });
    ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      if (generation !== this.generation) return;
      const frame = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      const event = eventFromFrame(frame);
      // each listener its own copy: Node-RED copies a msg only for a node's further wires, never across nodes, so one
      // event object in the msgs of two nodes (two lh-events, lh-error-polls, lh-run-watch) let one flow's change to
      // msg.payload reach the other's msg (a logging flow setting msg.payload.data stopped lh-dialog in another)
      const listeners = [...this.listeners];
      for (const [i, listener] of listeners.entries()) {
        try {
          listener(i === 0 ? event : structuredClone(event));
        } catch {
          // one listener's failure must not starve the others; listeners report their own errors
        }
      }
    });
    ws.on('close', (code: number) => {
      clearTimeout(usefulTimer);
      if (this.ws === ws) this.ws = undefined;
      this.stopPing();
      if (generation !== this.generation) return;
      // closed before it proved useful (or for an oversized frame): an early close; never opened: a failed attempt
      if (opened && (!useful || tooLarge)) this.history.earlyCloses++;
      else if (!opened) this.history.failures++;
      this.history.unanswered = !opened && refusedStatus === undefined;
      if (refusedStatus !== undefined && isUnavailableStatus(refusedStatus)) {
        this.setState(
          'unavailable',
          `the instrument has no ${CHANNEL_PATHS[this.channel].slice(1)} socket (HTTP ${refusedStatus})`,
        );
        this.retry(generation, this.maxDelay);
        return;
      }
      const reason =
        refusedStatus !== undefined
          ? `upgrade refused (HTTP ${refusedStatus})`
          : (lastError ?? `connection closed (code ${code})`);
      this.setState('disconnected', reason);
      this.retry(generation, this.backoffDelay());
    });
  }

  /**
   * The token to offer on the upgrade: the session's, if it has one within tokenWaitMs. The instrument accepts sockets
   * without a token (the tested client never sends one), and firmware errors exist on the socket alone: a login the
   * instrument is slow to answer must not keep it closed (it goes on, and later upgrades offer its token).
   */
  private async offeredToken(): Promise<string | undefined> {
    let asked: Promise<string | undefined> | undefined;
    try {
      asked = this.options.token?.();
    } catch {
      return undefined;
    }
    if (!asked) return undefined;
    // a failure or a late answer: without a token (the session reports its own failures)
    const settled = asked.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    let end: (() => void) | undefined;
    const late = new Promise<undefined>((resolve) => {
      end = () => resolve(undefined);
      timer = setTimeout(end, this.options.tokenWaitMs ?? DEFAULT_TOKEN_WAIT_MS);
    });
    this.endTokenWait = end;
    try {
      return await Promise.race([settled, late]);
    } finally {
      clearTimeout(timer);
      if (this.endTokenWait === end) this.endTokenWait = undefined;
    }
  }

  private get maxFrameBytes(): number {
    const max = this.options.maxFrameBytes;
    return max !== undefined && Number.isFinite(max) && max > 0 ? max : DEFAULT_MAX_FRAME_BYTES;
  }

  private sayTooLarge(message: string): void {
    if (this.saidTooLarge) return;
    this.saidTooLarge = true;
    this.notice({ channel: this.channel, message: `${CHANNEL_PATHS[this.channel].slice(1)}: ${message}` });
  }

  private get maxDelay(): number {
    return this.options.reconnectMaxMs ?? 30000;
  }

  private backoffDelay(): number {
    const timings = {
      firstMs: this.options.reconnectAfterDropMs ?? DEFAULT_RECONNECT_FIRST_MS,
      initialMs: this.options.reconnectInitialMs ?? DEFAULT_RECONNECT_INITIAL_MS,
      maxMs: this.maxDelay,
      unreachableMaxMs: this.options.reconnectUnreachableMaxMs ?? DEFAULT_RECONNECT_UNREACHABLE_MAX_MS,
    };
    return reconnectWaitMs(this.history, timings, this.options.random ?? Math.random);
  }

  private retry(generation: number, delayMs: number): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (generation === this.generation) void this.connect(generation);
    }, delayMs);
  }

  private startPing(ws: WebSocket): void {
    const every = this.options.pingIntervalMs ?? 30000;
    if (every <= 0) return;
    let answered = true;
    // a pong or a frame shows the connection alive: an instrument that never answers pings keeps a working socket
    ws.on('pong', () => (answered = true));
    ws.on('message', () => (answered = true));
    let judging = false;
    let pingedAt = 0;
    this.pingTimer = setInterval(() => {
      // judged after this turn's I/O (setImmediate runs after the poll phase): after an event-loop stall, the timer
      // runs before the frames that arrived meanwhile are read, and would drop a socket that kept delivering. A ping
      // is judged only once it had half an interval to be answered: a stall inside a timer makes the interval due
      // again at once (it is rescheduled from the time before the stall)
      // The wall clock: one set back since the ping (an NTP step, a VM resumed) puts it in the future, and waiting for
      // it to pass would leave a dead connection undetected (no event heard, the status connected) for the step's
      // length; such a ping has had this interval's timer to be answered, so it is judged now
      const since = Date.now() - pingedAt;
      if (judging || (since >= 0 && since < every / 2)) return;
      judging = true;
      setImmediate(() => {
        judging = false;
        if (ws.readyState !== ws.OPEN) return;
        if (!answered) {
          ws.terminate(); // neither a pong nor a frame since the last ping: the connection is dead without saying so
          return;
        }
        answered = false;
        pingedAt = Date.now();
        ws.ping();
      });
    }, every);
  }

  private stopPing(): void {
    clearInterval(this.pingTimer);
    this.pingTimer = undefined;
  }

  private setState(state: EventStateChange['state'], reason?: string): void {
    if (this.state === state) return;
    this.state = state;
    this.lastChange = reason === undefined ? { channel: this.channel, state } : { channel: this.channel, state, reason };
    this.report(this.lastChange);
  }
}

/** The two event channels of one instrument. */
export class InstrumentEvents extends EventEmitter {
  private readonly channels: Record<EventChannel, ChannelConnection>;
  private readonly baseUrl: string;
  private closed = false;

  constructor(options: EventStreamOptions) {
    super();
    this.setMaxListeners(0); // one state listener per node watching this instrument: dozens are normal
    this.baseUrl = options.baseUrl;
    const report = (change: EventStateChange): void => {
      this.emit('state', change);
    };
    const notice = (n: EventNotice): void => {
      this.emit('notice', n);
    };
    this.channels = {
      events: new ChannelConnection('events', eventSocketUrl(options.baseUrl, 'events'), options, report, notice),
      errors: new ChannelConnection('errors', eventSocketUrl(options.baseUrl, 'errors'), options, report, notice),
    };
  }

  /** Listens to a channel (opening its socket if needed); returns the function that stops listening. */
  subscribe(channel: EventChannel, listener: EventListener): () => void {
    const connection = this.channels[channel];
    if (this.closed) return () => undefined;
    connection.add(listener);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      connection.remove(listener);
    };
  }

  /** subscribe('errors', listener): every frame of `instincterrors`, normalised. */
  onErrors(listener: EventListener): () => void {
    return this.subscribe('errors', listener);
  }

  /** subscribe('events', listener): every frame of `instinctevents`, normalised. */
  onEvents(listener: EventListener): () => void {
    return this.subscribe('events', listener);
  }

  /** Hears connection state changes of both channels (filter by `change.channel`); returns the unsubscribe. */
  onState(listener: StateListener): () => void {
    this.on('state', listener);
    return () => {
      this.off('state', listener);
    };
  }

  /** Hears notices (an oversized frame refused), each said once per channel; returns the unsubscribe. */
  onNotice(listener: NoticeListener): () => void {
    this.on('notice', listener);
    return () => {
      this.off('notice', listener);
    };
  }

  state(channel: EventChannel): EventConnectionState {
    return this.channels[channel].state;
  }

  /** The last state change of an open channel (connected, disconnected or unavailable, with its reason), if any yet. */
  lastChange(channel: EventChannel): EventStateChange | undefined {
    return this.channels[channel].lastChange;
  }

  url(channel: EventChannel): string {
    return eventSocketUrl(this.baseUrl, channel);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Closes both sockets and every timer; resolves when the sockets are gone. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(EVENT_CHANNELS.map((c) => this.channels[c].stop('closed')));
    for (const c of EVENT_CHANNELS) this.channels[c].listeners.clear();
    this.removeAllListeners();
  }
}

function formatBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;
}
