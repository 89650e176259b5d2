import { LhError } from '../../client';
import { type Api, type ConnectionView } from './connection-state';
import { type Node, type NodeStatus, type Red } from './node-red';
import { redact } from './redaction';
import type { ConnectionSubscription, ServerConnection } from './server-connection';

const MAX_STATUS_TEXT = 40;

function shorten(text: string): string {
  return text.length > MAX_STATUS_TEXT ? `${text.slice(0, MAX_STATUS_TEXT - 1)}…` : text;
}

const MAX_CACHED_TEXTS = 500;
/**
 * A text made from longer values than this (an instrument's event code of 1 MiB) is not cached, and is shown clipped
 * to MAX_LONG_TEXT after redaction: 500 cached texts of a flood of such codes would hold a gigabyte, and every status
 * goes to each open editor.
 */
const MAX_CACHED_ID = 1024;
const MAX_LONG_TEXT = 200;
const statusTexts = new WeakMap<Red, Map<string, string>>();

/**
 * Status texts of every node, as keys of its message catalogue. A node that uses an lh-server follows the server's
 * connection state (`follow`): while the instrument is offline or refuses the login, that shows; otherwise the node's
 * own status (the last one it set, shown again when the server is back).
 */
export class Status {
  private own?: NodeStatus;
  private shared?: NodeStatus;
  /** while another replica watches the instrument (coordination): its line, shown above the connection state */
  private standbyLine?: NodeStatus;

  constructor(
    private readonly node: Node,
    private readonly RED: Red,
  ) {}

  /** A bare key names a shared text (`common.status.<key>`); a dotted key names one of the node's own catalogue. */
  private text(key: string, subs?: Record<string, unknown>): string {
    const full = key.includes('.') ? key : `common.status.${key}`;
    // Each text is translated once: RED._ (i18next, plural rules) took ~8 % of lh-steps' CPU per message (profiled).
    const id = subs ? `${full}|${JSON.stringify(subs)}` : full;
    if (id.length > MAX_CACHED_ID) {
      const long = redact(this.RED._(full, subs)); // redacted whole, then clipped: a clipped secret is not recognised
      // copied, not sliced: a slice would keep the whole long text alive as long as the status is kept
      return long.length > MAX_LONG_TEXT ? Buffer.from(`${long.slice(0, MAX_LONG_TEXT - 1)}…`).toString() : long;
    }
    let cache = statusTexts.get(this.RED);
    if (!cache) statusTexts.set(this.RED, (cache = new Map()));
    let text = cache.get(id);
    if (text === undefined) {
      text = redact(this.RED._(full, subs));
      if (cache.size >= MAX_CACHED_TEXTS) cache.clear();
      if (text !== full) cache.set(id, text); // an untranslated key (catalogue not loaded yet) is not kept
    }
    return text;
  }

  /** The node's own status, kept; shown unless the server's connection state is (then that one is shown again). */
  private show(status: NodeStatus): void {
    this.own = status;
    this.node.status(this.standbyLine ?? this.shared ?? status);
  }

  /**
   * Another replica watches the instrument (coordination standby or joining): `line` names it and shows instead of
   * the node's own status and of the server's connection state (the holder reports that); undefined when this
   * replica watches again (its own status, or the connection state, shows again). The same line twice shows once.
   */
  standby(line: NodeStatus | undefined): void {
    const before = this.standbyLine;
    if (
      before === line ||
      (before && line && before.text === line.text && before.fill === line.fill && before.shape === line.shape)
    )
      return;
    this.standbyLine = line;
    this.node.status(line ?? this.shared ?? this.own ?? {});
  }

  busy(key = 'requesting', subs?: Record<string, unknown>): void {
    this.show({ fill: 'blue', shape: 'dot', text: this.text(key, subs) });
  }

  ok(key: string, subs?: Record<string, unknown>): void {
    this.show({ fill: 'green', shape: 'dot', text: this.text(key, subs) });
  }

  warn(key: string, subs?: Record<string, unknown>): void {
    this.show({ fill: 'yellow', shape: 'ring', text: this.text(key, subs) });
  }

  idle(key: string, subs?: Record<string, unknown>): void {
    this.show({ fill: 'grey', shape: 'ring', text: this.text(key, subs) });
  }

  failed(err: unknown): void {
    this.show({ fill: 'red', shape: 'ring', text: shorten(failureReason(err)) });
  }

  /** A request that got no answer, below the offline threshold: yellow, with the short reason. */
  unanswered(err: unknown): void {
    this.show({ fill: 'yellow', shape: 'ring', text: shorten(failureReason(err)) });
  }

  /** A status decided elsewhere (the coordination's standby and lost lines). */
  other(status: NodeStatus): void {
    this.show(status);
  }

  clear(): void {
    this.show({});
  }

  /**
   * The server's connection state, as this node sees it: offline (red, "offline") and a refused login or untrusted
   * certificate (red, its reason) show instead of the node's own status; online or unknown shows the node's own again.
   */
  connection(view: ConnectionView): void {
    const shared: NodeStatus | undefined =
      view.state === 'offline'
        ? { fill: 'red', shape: 'ring', text: this.text('offline') }
        : view.state === 'refused'
          ? { fill: 'red', shape: 'ring', text: shorten(failureReason(view.error)) }
          : undefined;
    const before = this.shared;
    this.shared = shared;
    if (this.standbyLine) return; // a standby shows who watches; the holder shows (and reports) the connection
    if (shared) {
      if (before?.text !== shared.text || before?.fill !== shared.fill) this.node.status(shared);
    } else if (before) this.node.status(this.own ?? {});
  }

  /**
   * Follows `connection` (the node's lh-server's) for the interfaces `apis` (default A) until the node closes.
   * The status shows the shared view (offline at the smallest threshold of the server's watchers); `onChange` hears
   * the node's own view (offline at its own `offlineAfter`) when it changes. Not with the current one: a node must not
   * send while the flow is being started (nodes wired to it may not exist yet), so a watcher reads its own view after
   * each poll too, catching up with what changed while it was not deployed.
   * Does nothing without a connection (the server is not valid: the node says so itself).
   */
  follow(
    connection: ServerConnection | undefined,
    options: { apis?: readonly Api[]; offlineAfter?: number; onChange?: (own: ConnectionView) => void } = {},
  ): void {
    if (!connection) return;
    const subscription: ConnectionSubscription = {
      // interface A by default: every node needs it (its login, its operations); an error poll names its sources
      apis: options.apis ?? ['A'],
      offlineAfter: options.offlineAfter,
      onChange: (view, own) => {
        this.connection(view);
        options.onChange?.(own);
      },
    };
    const off = connection.subscribe(subscription);
    this.node.on('close', off);
    this.connection(connection.view(subscription.apis));
  }
}

/** A short reason for the status line (redacted); the full message goes to the debug sidebar and Catch nodes. */
export function failureReason(err: unknown): string {
  return redact(reasonOf(err));
}

/** Why a login failed, short enough for the status line: a refusal is not an outage, and says so. */
function loginFailureCause(statusCode: number | undefined): string {
  if (statusCode === undefined) return 'no answer, not resent';
  if (statusCode >= 500) return `${statusCode}, not resent`;
  return `rejected, ${statusCode}`;
}

function isLoginOperation(operation: string): boolean {
  return operation === 'authenticate' || operation === 'renew-token';
}

function reasonOf(err: unknown): string {
  if (!(err instanceof LhError)) return err instanceof Error ? err.message : String(err);
  switch (err.kind) {
    case 'validation':
      return `invalid ${err.field ?? 'input'}`;
    case 'network':
      return 'instrument unreachable';
    case 'timeout':
      return 'no answer (timeout)';
    case 'tls':
      return 'TLS certificate not trusted';
    case 'auth':
      // a 401 outside a login: no user set in the lh-server (reads answer without one, changes and B do not), or one
      // the instrument no longer accepts: say where to type it (the README names the simulator's admin / labwire)
      if (err.operation !== 'authenticate' && err.statusCode === 401)
        return 'not authorised (401): set user/password in lh-server';
      if (err.operation !== 'authenticate') return `not authorised (${err.statusCode ?? ''})`;
      // The session's message tells which: an expired password needs the change-password path, not a retry.
      if (/password .* has expired/.test(err.message)) return 'password expired: change in lh-server';
      if (/locked out/.test(err.message)) return 'login failed: user locked out';
      return `login failed (${loginFailureCause(err.statusCode)})`;
    case 'http':
      // a 5xx to a login (or a login held back after one): the instrument failing, not the credentials refused
      if (isLoginOperation(err.operation) && (err.statusCode ?? 0) >= 500)
        return `instrument error (login ${err.statusCode}, not resent)`;
      return err.statusCode ? `${err.operation}: ${err.statusCode}` : err.operation;
    case 'config':
      return err.message;
    case 'instrument':
      return 'refused by instrument';
    case 'already-answered':
      return 'already answered';
    default:
      return err.statusCode ? `${err.operation}: ${err.statusCode}` : err.operation;
  }
}
