import { EventEmitter } from 'events';

import { isUnreachable, LhError } from './errors';
import { type KeptRejection, LOGIN_SPACING_MAX_MS, type LoginCredentials, LoginGate, type LoginTurn } from './login-gate';
import {
  describeExpiry,
  type PasswordExpiry,
  passwordExpiryOf,
  type PasswordWarning,
  warnedAt,
  warnNow,
} from './password-expiry';
import {
  type ApiResponse,
  checkRequestBody,
  MEDIA_JSON_PATCH,
  neverReached,
  type RequestSpec,
  timerDelay,
  type Transport,
} from './transport';
import { type AuthResult } from './types';

export interface Credentials {
  username?: string;
  password?: string;
}

export type SessionState = 'idle' | 'logging-in' | 'authenticated' | 'login-failed' | 'password-expired' | 'locked' | 'closed';

/**
 * Whether the periodic session check asks the instrument now: only a session that is logged in (it never logs in by
 * itself, and a refused or locked login is left to the user, as every login rule says).
 */
export function sessionCheckDue(state: SessionState, usesLogin: boolean): boolean {
  return usesLogin && state === 'authenticated';
}

/** The bounds of a session check interval: a check storm below, setInterval's 2^31 - 1 ms overflow (to 1 ms) above. */
export const SESSION_CHECK_MIN_MS = 100;
export const SESSION_CHECK_MAX_MS = 86_400_000;

export interface SessionStats {
  logins: number;
  renewals: number;
  loginFailures: number;
  reauthentications: number;
}

export interface SessionOptions {
  now?: () => number;
  defaultLifetimeMs?: number;
  /** The logins of the instrument shared with its other sessions in this Node-RED (its home's); else the session's own. */
  logins?: LoginGate;
}

interface Token {
  value: string;
  expiresAt: number;
  renewAt: number;
  /** when the login or renewal that issued it was sent */
  issuedAt: number;
  /** issued by a login a 401 caused */
  afterRefusal?: boolean;
}

/**
 * A 401 to a token that a 401 made this Node-RED log in for, less than this long ago, leads to no new login: the
 * instrument refuses the tokens it has just issued (its clock behind, or an endpoint that answers 401 to this user
 * whatever the token), and a login per request would follow for as long as the flow polls. So such 401s cost at most
 * one login per this long; a 401 to any other token (the session ended on the instrument) logs in at once.
 */
export const FRESH_TOKEN_REFUSED_MS = 10_000;

export type UnsignedSpec = Omit<RequestSpec, 'token'>;

/** GET check-authentication: whether the token sent is still a session (no password sent). */
export const CHECK_AUTHENTICATION: UnsignedSpec = {
  api: 'A',
  method: 'GET',
  path: '/authenticate/check-authentication',
  operation: 'check-authentication',
  idempotent: true,
};

/** A token this close to its end is treated as expired: log in afresh instead of renewing. */
const EXPIRY_GUARD_MS = 100;
/** Renew this long before expiry: 5 % of the lifetime, within these bounds (15 s of a 5-minute token). */
const MIN_MARGIN_MS = 250;
const MAX_MARGIN_MS = 15000;
/** A request carrying the password waits at least this long: a slow rejection must arrive, not be resent. */
export const LOGIN_TIMEOUT_MS = 30000;

/**
 * The token lifecycle of one instrument: one login shared by every caller, renewal shortly before expiry,
 * one re-login on a 401, and never an automatic second try of a rejected password.
 */
export class Session extends EventEmitter {
  readonly stats: SessionStats = { logins: 0, renewals: 0, loginFailures: 0, reauthentications: 0 };
  private current?: Token;
  private renewTimer?: NodeJS.Timeout;
  /** Whether anyone asked for the token since it was issued: only a session in use is renewed on schedule. */
  private inUse = false;
  private pending?: Promise<string>;
  private blocked?: LhError;
  private closed = false;
  private stateValue: SessionState = 'idle';
  private passwordExpiryValue?: PasswordExpiry;
  private passwordWarnedAt?: number;
  private readonly now: () => number;
  private readonly defaultLifetimeMs: number;
  private readonly logins: LoginGate;
  private readonly loginKey: string;
  private readonly stopHearingReleases: () => void;

  constructor(
    private readonly transport: Transport,
    private readonly credentials: Credentials,
    options: SessionOptions = {},
  ) {
    super();
    this.now = options.now ?? Date.now;
    this.defaultLifetimeMs = options.defaultLifetimeMs ?? 5 * 60000;
    this.logins = options.logins ?? new LoginGate();
    this.loginKey = LoginGate.keyOf(credentials.username ?? '', credentials.password ?? '');
    // A new session (a deploy, a restart of the node) does not release a rejection of these credentials: a full deploy
    // restarts every lh-server node, also when the user only edited other flows, and each would cost the instrument one
    // more failed login. Changed credentials are another key (tried at once); the same ones go again by Test connection.
    // a user action on these credentials through another session (Test connection on another lh-server node of this
    // instrument and user) frees this one too: it holds a copy of the same rejection
    this.stopHearingReleases = this.logins.onRelease(this.loginKey, () => this.released());
  }

  get state(): SessionState {
    return this.stateValue;
  }

  get usesLogin(): boolean {
    return Boolean(this.credentials.username);
  }

  /** What the last login or renewal said of the password's expiry, if it said anything. */
  get passwordExpiry(): PasswordExpiry | undefined {
    return this.passwordExpiryValue;
  }

  /** Why logins are held back, if a login was rejected. */
  get loginBlockedBy(): LhError | undefined {
    return this.blocked;
  }

  /** A user action (Test connection with these credentials, successful) lets a rejected login go once more. */
  allowLoginAgain(): void {
    this.released();
    this.logins.release(this.loginKey, this.loginCredentials()); // tells every other session of these credentials (released() here too)
  }

  /** The user name and password a login sends, for the gate's store of rejections kept across restarts. */
  private loginCredentials(): LoginCredentials {
    return { username: this.credentials.username ?? '', password: this.credentials.password ?? '' };
  }

  /** The way out of a held rejection without the editor: a restart, or where the gate keeps rejections, more. */
  private wayOut(): string {
    return this.logins.wayOut ?? HEADLESS_WAY_OUT;
  }

  /** The gate let these credentials go (a user acted): the next request may log in, through the gate. */
  private released(): void {
    if (this.closed) return;
    if (this.blocked === undefined && this.stateValue === 'authenticated') return;
    this.blocked = undefined;
    if (this.stateValue !== 'logging-in') this.setState('idle');
  }

  /** The bearer token to send, logging in or renewing first when needed; undefined when no user is configured. */
  async token(): Promise<string | undefined> {
    if (!this.usesLogin) return undefined;
    if (this.closed) throw new LhError('the lh-server node was closed', { kind: 'config', operation: 'authenticate' });
    if (this.blocked) throw this.blocked;
    const token = await this.currentOrFresh();
    this.inUse = true;
    return token;
  }

  private currentOrFresh(): Promise<string> | string {
    if (this.pending) return this.pending;
    const now = this.now();
    if (!this.current || now >= this.current.expiresAt - EXPIRY_GUARD_MS) return this.single(() => this.login());
    if (now >= this.current.renewAt) return this.single(() => this.renew());
    return this.current.value;
  }

  /** Sends a request with the session token; a 401 leads to one fresh login and one more try. */
  async send<T>(spec: UnsignedSpec): Promise<ApiResponse<T>> {
    checkRequestBody(spec); // before a login could be sent for it
    if (spec.anonymous) return this.transport.request<T>(spec);
    const token = await this.token();
    try {
      return await this.transport.request<T>({ ...spec, token });
    } catch (err) {
      if (!(err instanceof LhError) || err.statusCode !== 401 || !token) throw err;
      this.stats.reauthentications++;
      const fresh = await this.reauthenticate(token, spec.operation);
      return this.transport.request<T>({ ...spec, token: fresh });
    }
  }

  /**
   * The session health check: sends `spec` with the token held, only while it is neither due for renewal nor
   * expired, and never marks the session as in use — so the check never logs in or renews by itself and an idle
   * Node-RED still lets its session lapse. A 401 (the token was revoked on the instrument) leads to one fresh login and
   * one more try, as for any request, while `wanted()` still holds. Resolves false when nothing was sent.
   */
  async checkHeld(spec: UnsignedSpec, wanted: () => boolean = () => true): Promise<boolean> {
    const held = this.current;
    // logged in (not refused, locked or closed), no login or renewal under way, the token not yet due for renewal
    if (this.closed || this.pending || !sessionCheckDue(this.stateValue, this.usesLogin)) return false;
    if (!held || this.now() >= held.renewAt) return false;
    try {
      await this.transport.request({ ...spec, token: held.value });
    } catch (err) {
      // no login for a check that is no longer wanted (stopped, the client closing)
      if (!(err instanceof LhError) || err.statusCode !== 401 || this.closed || !wanted()) throw err;
      this.stats.reauthentications++;
      const fresh = await this.reauthenticate(held.value, spec.operation);
      await this.transport.request({ ...spec, token: fresh });
    }
    return true;
  }

  /**
   * Ends the session for good: no login starts after this, a login in flight is awaited, and the token is
   * given back with DELETE authenticate (errors ignored: the instrument may be gone; the token expires anyway).
   */
  async end(): Promise<void> {
    this.closed = true;
    this.stopHearingReleases();
    clearTimeout(this.renewTimer);
    if (this.pending) await this.pending.catch(() => undefined);
    const token = this.current?.value;
    this.current = undefined;
    this.setState('closed');
    if (!token) return;
    try {
      await this.transport.request({
        api: 'A',
        method: 'DELETE',
        path: '/authenticate',
        operation: 'logout',
        idempotent: false,
        token,
      });
    } catch {
      // Nothing more to do: the session ends on the instrument when the token expires.
    }
  }

  private async reauthenticate(stale: string, operation: string): Promise<string> {
    if (this.closed) throw new LhError('the lh-server node was closed', { kind: 'config', operation: 'authenticate' });
    if (this.pending) return this.pending;
    if (this.current && this.current.value !== stale) return this.current.value;
    const age = this.current?.afterRefusal ? this.now() - this.current.issuedAt : Infinity;
    // a token "issued in the future" (the wall clock set back since) is of no known age: held back for it, every
    // request would fail with this 401 for as long as the step (an hour back: an hour); one login goes instead
    if (age >= 0 && age < FRESH_TOKEN_REFUSED_MS) {
      throw new LhError(
        `the instrument refused (401) a token it issued ${(age / 1000).toFixed(1)} s ago, so this Node-RED does not log in again for it: ` +
          `check the instrument's clock and the user's permissions for ${operation}. A later request logs in again, at most once in ${FRESH_TOKEN_REFUSED_MS / 1000} s`,
        { kind: 'auth', operation, statusCode: 401 },
      );
    }
    this.current = undefined;
    return this.single(async () => {
      const token = await this.login();
      if (this.current?.value === token) this.current.afterRefusal = true;
      return token;
    });
  }

  private single(work: () => Promise<string>): Promise<string> {
    const p = work().finally(() => {
      if (this.pending === p) this.pending = undefined;
    });
    this.pending = p;
    return p;
  }

  private async login(): Promise<string> {
    this.setState('logging-in');
    const turn = await this.loginTurn('authenticate');
    const started = this.now();
    try {
      const res = await this.sendCredentials('/authenticate', 'authenticate');
      this.stats.logins++;
      const token = this.accept(res.data, started, 'authenticate');
      turn.done();
      return token;
    } catch (err) {
      const failure = this.loginFailed(err);
      this.endTurn(turn, err, failure);
      throw failure;
    }
  }

  /**
   * Ends a turn of the gate after a failed login or renewal: a rejection holds the credentials back; a failure after
   * the password may have reached the instrument (a 5xx, a reset, a timeout, an answer without a token) spaces the
   * next login out; one that cannot have left (no connection, TLS refused) leaves the next free.
   */
  private endTurn(turn: Extract<LoginTurn, { go: true }>, err: unknown, failure: unknown): void {
    if (this.blocked !== undefined && failure === this.blocked) turn.done(this.blocked, stateOfRejection(this.blocked));
    // one a close ended (a redeploy) does not delay the new session's login: it was the close, not the instrument
    else if (mayHaveReached(err) && failure instanceof LhError && !this.closed) turn.failed(failure, this.now());
    else turn.done();
  }

  /**
   * The instrument's turn to be sent this password: waits while another session of it sends the same credentials,
   * and holds back (as a rejection of its own) when they were rejected since the last user action.
   */
  private async loginTurn(operation: string): Promise<Extract<LoginTurn, { go: true }>> {
    for (;;) {
      if (this.closed) throw new LhError('the lh-server node was closed', { kind: 'config', operation });
      const turn = this.logins.turn(this.loginKey, this.now(), this.loginCredentials());
      if (turn.go) return turn;
      if ('spaced' in turn) {
        if (this.stateValue === 'logging-in') this.setState('idle');
        const error = spacedOut(turn.spaced, this.now(), this.credentials.username ?? '');
        spacedUntil.set(error, turn.spaced.nextAt);
        // the login's interface; one failed login is one piece of evidence, not one per request held back after it
        // (review70: nodes polling through one lh-server turned a single reset login into offline, online 1 s later):
        // requests held back count once the instrument failed logins in a row, at its nodes' pace from then on
        // counted with the failure it waits out, the cause: the lh-server's outage line and an offline msg's reason
        // quote it, and this error's countdown ("the next goes … in 3.9 s") would be stale from the moment it is said
        if (isUnreachable(error) && turn.spaced.count >= 2) this.transport.heldBack('A', operation, turn.spaced.failure);
        throw error;
      }
      if ('held' in turn) {
        // its own copy: a node may add to the error it throws
        const { statusCode, body } = turn.held;
        // a rejection kept from before this start of Node-RED: said in this session's words (its user, its way out)
        const state = turn.kept ? keptState(turn.kept.state) : stateOfRejection(turn.held);
        const message = turn.kept
          ? refusalMessage(state, this.credentials.username ?? '', keptCause(turn.kept), this.wayOut())
          : turn.held.message;
        this.current = undefined;
        this.blocked = new LhError(message, { kind: 'auth', operation: 'authenticate', statusCode, body });
        rejectionStates.set(this.blocked, state);
        this.setState(state);
        throw this.blocked;
      }
      await turn.wait;
    }
  }

  /** Login and renewal send the same credentials body (4.2). */
  private sendCredentials(path: string, operation: string, token?: string): Promise<ApiResponse<AuthResult>> {
    return this.transport.request<AuthResult>({
      api: 'A',
      method: 'POST',
      path,
      operation,
      mediaType: MEDIA_JSON_PATCH,
      body: { username: this.credentials.username, password: this.credentials.password ?? '' },
      // Sent once: after a timeout, a reset or a 5xx the instrument may have counted the attempt.
      idempotent: false,
      minTimeoutMs: LOGIN_TIMEOUT_MS,
      token,
    });
  }

  private async renew(): Promise<string> {
    const current = this.current;
    if (!current) return this.login();
    let turn: Extract<LoginTurn, { go: true }>;
    try {
      turn = await this.loginTurn('renew-token');
    } catch (err) {
      // logins are spaced out after failures without a verdict: while the token still lives, renew when the gate lets
      const until = err instanceof LhError ? spacedUntil.get(err) : undefined;
      if (until === undefined || this.current !== current || this.now() >= current.expiresAt - EXPIRY_GUARD_MS) throw err;
      current.renewAt = until;
      this.scheduleRenewal();
      return current.value;
    }
    const started = this.now();
    try {
      const res = await this.sendCredentials('/authenticate/renew-token', 'renew-token', current.value);
      this.stats.renewals++;
      turn.done();
      return this.accept(res.data, started, 'renew-token');
    } catch (err) {
      // A 401 to the renewal of a token the instrument no longer knows (the session ended on its screen, the
      // instrument restarted) may say nothing of the password: asked without the password, the instrument refuses
      // the token too. Then one login follows (it goes through the gate, and a rejection holds it as any login's).
      if (isRejection(err) && err.statusCode === 401 && (await this.tokenRefused(current.value))) {
        turn.done();
        this.current = undefined;
        return this.login();
      }
      // Else a rejected renewal carried the password: no login follows it, the user acts first.
      if (isRejection(err)) {
        this.current = undefined;
        const failure = this.loginFailed(err);
        turn.done(this.blocked, this.blocked ? stateOfRejection(this.blocked) : undefined);
        throw failure;
      }
      this.endTurn(turn, err, err);
      // Renewal is early; while the token still lives, keep using it and renew on a later call (not before the gate
      // lets another login or renewal of these credentials go)
      if (this.current && this.now() < this.current.expiresAt - EXPIRY_GUARD_MS) {
        this.current.renewAt = Math.max(this.now() + 1000, this.logins.nextAt(this.loginKey) ?? 0);
        this.scheduleRenewal();
        return this.current.value;
      }
      throw err;
    }
  }

  /** Whether the instrument refuses `token` itself (check-authentication, no password sent: 401). */
  private async tokenRefused(token: string): Promise<boolean> {
    try {
      await this.transport.request({ ...CHECK_AUTHENTICATION, token });
      return false;
    } catch (err) {
      return err instanceof LhError && err.statusCode === 401;
    }
  }

  private accept(result: AuthResult | undefined, started: number, operation: string): string {
    if (!result || typeof result.token !== 'string' || result.token === '') {
      throw new LhError(`${operation}: the instrument answered without a token`, { kind: 'response', operation });
    }
    const lifetime = tokenLifetimeMs(result) ?? this.defaultLifetimeMs;
    const margin = Math.min(MAX_MARGIN_MS, Math.max(MIN_MARGIN_MS, lifetime * 0.05));
    this.current = {
      value: result.token,
      expiresAt: started + lifetime,
      renewAt: started + lifetime - margin,
      issuedAt: started,
    };
    this.inUse = false;
    this.scheduleRenewal();
    this.setState('authenticated');
    const expiry = passwordExpiryOf(result, this.now());
    if (expiry) this.passwordExpiryValue = expiry;
    const now = this.now();
    this.passwordWarnedAt = warnedAt(this.passwordWarnedAt, now);
    if (expiry && warnNow(expiry, this.passwordWarnedAt, now)) {
      this.passwordWarnedAt = now;
      const warning: PasswordWarning = {
        ...expiry,
        user: this.credentials.username ?? '',
        text: describeExpiry(expiry, this.credentials.username ?? ''),
      };
      this.emit('password-warning', warning);
    }
    return result.token;
  }

  /**
   * Any 4xx to a request carrying the password holds further ones back until a user acts (allowLoginAgain):
   * the instrument counts rejections and locks the user out. A 5xx is the instrument failing (kind http), not held back.
   */
  private loginFailed(err: unknown): unknown {
    if (!(err instanceof LhError) || !isRejection(err)) {
      this.setState('idle');
      if (err instanceof LhError && err.statusCode !== undefined && err.statusCode >= 500) {
        return withoutVerdict(
          new LhError(
            `login as "${this.credentials.username ?? ''}" failed: the instrument answered ${err.message.replace(/^[\w-]+ failed: /, '').replace(/\.$/, '')}. ` +
              `It was sent once; the next login goes with a later request, logins failing so spaced out (1 s, 2 s, 4 s, … at most ${LOGIN_SPACING_MAX_MS / 1000} s apart)`,
            // the instrument's trouble, not the credentials': the server kind, as a reset gets the network kind, so the
            // status says the instrument failed (not "login failed") and a spaced-out login after it counts as it does
            { kind: 'http', operation: 'authenticate', statusCode: err.statusCode, body: err.body, attempts: err.attempts },
          ),
        );
      }
      return err;
    }
    this.stats.loginFailures++;
    const user = this.credentials.username ?? '';
    const text = JSON.stringify(err.body ?? '').toLowerCase();
    const state: SessionState = text.includes('expired')
      ? 'password-expired'
      : text.includes('lock') || err.statusCode === 423
        ? 'locked'
        : 'login-failed';
    const message = refusalMessage(
      state,
      user,
      // the expired and the locked-out message name no status: it says nothing more there
      state === 'login-failed' ? `(${err.statusCode ?? 'no status'})${instrumentWords(err)}` : '',
      this.wayOut(),
    );
    this.blocked = new LhError(message, { kind: 'auth', operation: 'authenticate', statusCode: err.statusCode, body: err.body });
    rejectionStates.set(this.blocked, state);
    this.setState(state);
    return this.blocked;
  }

  /**
   * Renews on time even when requests are sparse (a 5 s poll would often miss the last 5 % of a 30 s token).
   * A token nobody used since it was issued is left to lapse: an idle Node-RED does not keep sessions alive.
   */
  private scheduleRenewal(): void {
    clearTimeout(this.renewTimer);
    if (this.closed || !this.current) return;
    this.renewTimer = setTimeout(() => this.renewOnSchedule(), timerDelay(this.current.renewAt - this.now()));
    this.renewTimer.unref();
  }

  private renewOnSchedule(): void {
    if (this.closed || this.pending || !this.current || !this.inUse) return;
    // A failure here shows at the next request, which logs in again if the token is gone.
    this.single(() => this.renew()).catch(() => undefined);
  }

  private setState(state: SessionState): void {
    if (state === this.stateValue || this.stateValue === 'closed') return; // closed for good
    this.stateValue = state;
    this.emit('state', state);
  }
}

/**
 * The way out of a held rejection where nobody can press Test connection (a Node-RED run without its editor, from a
 * flows file): a restart, as each start of Node-RED tries the credentials once (review68).
 */
const HEADLESS_WAY_OUT = 'without the editor: restart Node-RED, each start tries these credentials once';

/**
 * What a refused login says: `cause` is how it was refused (`(401), the instrument said "…"`, or when, for one kept
 * from before a restart), `wayOut` the way out without the editor. The user name, never the password.
 */
function refusalMessage(state: SessionState, user: string, cause: string, wayOut: string): string {
  if (state === 'password-expired')
    return (
      `the password of user "${user}" has expired${cause && ` ${cause}`}: set a new one with "Change expired password" ` +
      'in the lh-server node (or on the instrument), update the password there and deploy again'
    );
  if (state === 'locked')
    return (
      `user "${user}" is locked out by the instrument after too many failed logins${cause && ` ${cause}`}; these credentials are not sent again ` +
      '(also not after a deploy): wait for the lock to end, then press Test connection in the lh-server node ' +
      `(${wayOut})`
    );
  return (
    `login as "${user}" was rejected ${cause}: check the user name and password in the lh-server node. ` +
    'This user name and password are not sent again, by any lh-server node of this instrument, also not after a deploy, ' +
    'so this Node-RED does not lock the user out: correct the password there and deploy, or, once it is right on the ' +
    `instrument, press Test connection (${wayOut})`
  );
}

/** How a rejection kept from before this start of Node-RED was refused: its status and when. */
function keptCause(kept: KeptRejection): string {
  return `(${kept.statusCode ?? 'no status'}, at ${new Date(kept.at).toISOString()}, before this start of Node-RED)`;
}

/** The session state of a kept rejection (a file may say anything: what it does not know is a refused login). */
function keptState(state: string): SessionState {
  return state === 'password-expired' || state === 'locked' ? state : 'login-failed';
}

/** When the gate lets the next login go, for the error a spaced-out login failed with. */
const spacedUntil = new WeakMap<LhError, number>();

/** Whether a failed login or renewal may have reached the instrument (which may have counted it): all but no connection. */
function mayHaveReached(err: unknown): boolean {
  if (!(err instanceof LhError) || neverReached(err)) return false;
  return err.kind !== 'tls' && err.kind !== 'config' && err.kind !== 'validation';
}

/** The error of a login the gate spaces out: what failed, and when the next goes. No password, no token. */
function spacedOut(spaced: { failure: LhError; count: number; nextAt: number }, now: number, user: string): LhError {
  const { failure, count, nextAt } = spaced;
  const cause =
    failure.kind === 'response'
      ? 'an answer without a token'
      : failure.statusCode !== undefined
        ? `the instrument answered ${failure.statusCode}`
        : failure.kind === 'timeout'
          ? 'no answer in time'
          : `the connection failed${failure.code ? ` (${String(failure.code)})` : ''}`;
  const error = new LhError(
    `login as "${user}" not sent: ${count === 1 ? 'the last login' : `the last ${count} logins`} failed without a verdict on ` +
      `the password (${cause}), and the instrument may count each as a failed login, so logins are spaced out (1 s, 2 s, ` +
      `4 s, … at most ${LOGIN_SPACING_MAX_MS / 1000} s apart): the next goes with a request in ${(Math.ceil(Math.max(0, nextAt - now) / 100) / 10).toFixed(1)} s`,
    // the kind of the failure it waits out: no answer, a reset or a 5xx is the instrument unreachable for the nodes
    // (their status, and one warning by the lh-server), not a refused login each node would log (issue 32)
    { kind: failure.kind, operation: 'authenticate', statusCode: failure.statusCode, code: failure.code },
  );
  return withoutVerdict(error);
}

/**
 * The errors of logins that failed without a verdict on the password (a 5xx) or were not sent for such failures
 * before (spaced out): the instrument failing or away, which the lh-server's connection state says once, not each
 * node that polls through it (review68: their texts change with each poll, a count and a countdown, so each node
 * logged one line per poll while the instrument failed).
 */
const noVerdict = new WeakSet<LhError>();

function withoutVerdict(err: LhError): LhError {
  noVerdict.add(err);
  return err;
}

/** Whether `err` is a login that failed without a verdict, or one not sent because of such failures (see noVerdict). */
export function isLoginWithoutVerdict(err: unknown): boolean {
  return err instanceof LhError && noVerdict.has(err);
}

/** The session state each rejection put its session in: another session held back by it says the same. */
const rejectionStates = new WeakMap<LhError, SessionState>();

function stateOfRejection(rejection: LhError): SessionState {
  return rejectionStates.get(rejection) ?? 'login-failed';
}

/** A 4xx answer to a request carrying the password: the instrument decided, and may have counted it. */
function isRejection(err: unknown): err is LhError {
  return err instanceof LhError && err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500;
}

/** The shortest life a token is read to have: a misread one (a claim in fractions of a second) never renews in a loop. */
export const MIN_READ_LIFETIME_MS = 1000;
/** The longest: a token said to live for ages (exp far off, or beyond what a number holds) is renewed daily. */
export const MAX_READ_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * Prefers the JWT's own lifetime (exp - iat, immune to clock skew), else `expiresIn` in minutes. A token without `iat`
 * is read by this host's clock (exp - now), bounded by exp - nbf when it has `nbf` (ASP.NET's JwtSecurityToken sets
 * nbf and exp, no iat): a clock behind the instrument's would read a longer life than the token has, and renew after
 * the instrument refused it; a clock ahead past exp reads exp - nbf rather than nothing. A clock ahead within the
 * life reads exp - now, yet never less than half of exp - nbf: a fresh token with less than half its life left by
 * this host's clock means the clock is ahead (an nbf set back by more than the life is not met), and reading the few
 * milliseconds left would renew, the password sent, with every request. Every reading lies between
 * MIN_READ_LIFETIME_MS and MAX_READ_LIFETIME_MS.
 */
export function tokenLifetimeMs(result: AuthResult, now: number = Date.now()): number | undefined {
  const read = claimedLifetimeMs(result, now);
  return read === undefined ? undefined : Math.min(MAX_READ_LIFETIME_MS, Math.max(MIN_READ_LIFETIME_MS, read));
}

function claimedLifetimeMs(result: AuthResult, now: number): number | undefined {
  const claims = decodeJwtClaims(result.token);
  if (claims && finite(claims.exp)) {
    if (finite(claims.iat) && claims.exp > claims.iat) return (claims.exp - claims.iat) * 1000;
    const issued = finite(claims.nbf) && claims.exp > claims.nbf ? (claims.exp - claims.nbf) * 1000 : undefined;
    const left = claims.exp * 1000 - now;
    if (left > 0) return issued === undefined ? left : Math.max(Math.min(left, issued), issued / 2);
    if (issued !== undefined) return issued;
  }
  if (finite(result.expiresIn) && result.expiresIn > 0) return result.expiresIn * 60000;
  return undefined;
}

function finite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

export function decodeJwtClaims(token: string): Record<string, unknown> | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** What the instrument said when it refused, for the user; the node boundary redacts any echoed secret. */
function instrumentWords(err: LhError): string {
  const words = err.message.replace(/^[\w-]+ failed: \d{3} ?/, '').trim();
  return words === '' || words === err.message ? '' : `, the instrument said "${words}"`;
}
