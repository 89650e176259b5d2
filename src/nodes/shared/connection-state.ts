/**
 * One reachability state per lh-server, decided without timers, I/O or Node-RED: the outcomes of its client's
 * requests, its event sockets opening and its session's login refusals are folded into one state, and every node
 * of that server reads its view of it (server-connection.ts publishes it; status.ts shows it).
 *
 * - A request that got an answer (any HTTP status below 500, a refusal included) shows the instrument reachable: its
 *   interface's failure count goes back to 0. An event socket that opens shows interface A reachable.
 * - A request that got none (network, timeout, 5xx after the retries: `isUnreachable`) counts one failure, unless it
 *   was sent before the last counted failure was known: the two sources of one poll, or two nodes polling at the same
 *   moment, are one piece of evidence, not two. Nor does it count when another request of its interface was answered
 *   while it was under way: the instrument answered meanwhile, so one slow operation timing out (a long lh-steps
 *   request) is that operation's problem, not an outage. An interface counts as offline from `offlineAfter` failures
 *   in a row.
 * - An untrusted TLS certificate and a refused login (rejected, password expired, locked out) are answers that make
 *   the instrument unusable, not unreachable: they show as such, never as offline, and failures are not counted
 *   while a login is refused (no request of the session is sent then). A refused login concerns the interfaces whose
 *   requests go through the session: A, and B unless B has its own instrument token (then B is watched as usual).
 * - A socket that closes is not counted: instruments close idle sockets; the polls and the reconnects are the probe.
 */
import { isUnreachable, LhError, type SessionState } from '../../client';

export type Api = 'A' | 'B';
export const APIS: readonly Api[] = ['A', 'B'];

/** Unreachable polls in a row before the instrument counts as offline, unless a node configures another number. */
export const DEFAULT_OFFLINE_AFTER = 3;

/** What is known of one interface (A: preparation service, B: instrument control interface). */
export interface InterfaceTrack {
  /** unanswered requests in a row (counted as described above) */
  failures: number;
  /** the failures of the streak the last answer ended (reported with "online") */
  streak: number;
  /** why the last counted request failed */
  reason?: string;
  /** requests up to this sequence number were sent before the last counted failure was known */
  countedUpTo: number;
  /** an answer that makes the interface unusable until a later answer: an untrusted certificate */
  unusable?: LhError;
  /** whether anything was heard of it at all */
  heard: boolean;
}

export interface Reachability {
  tracks: Record<Api, InterfaceTrack>;
  /**
   * Per interface, the highest sequence number sent when one of its requests was last answered: a request sent up to
   * it was under way while the instrument answered. Views never read it (a change of it alone changes no view).
   */
  answeredUpTo: Record<Api, number>;
  /** the session's refusal (login rejected, password expired, locked out), until a login is allowed again */
  refused?: LhError;
  /** the interfaces whose requests go through the session (a refusal stops them): A, and B without its own token */
  sessionApis: readonly Api[];
}

/** One thing the lh-server saw. */
export type Observation =
  | {
      kind: 'request';
      api: Api;
      /** the request's sequence number (its client counts requests as it sends them) */
      sent: number;
      /** the highest sequence number sent when the outcome was known */
      latest: number;
      /** undefined: answered (2xx) */
      error?: LhError;
      /**
       * a login or renewal (sent, or held back after one that got no answer): unanswered, it counts for every
       * interface whose requests go through the session, as none of them can go without it
       */
      login?: boolean;
    }
  | { kind: 'socket'; state: 'connected' | 'disconnected' | 'unavailable' }
  | { kind: 'session'; state: SessionState; error?: LhError };

export function newReachability(sessionApis: readonly Api[] = APIS): Reachability {
  const track = (): InterfaceTrack => ({ failures: 0, streak: 0, countedUpTo: 0, heard: false });
  return { tracks: { A: track(), B: track() }, answeredUpTo: { A: 0, B: 0 }, sessionApis };
}

const REFUSED_STATES: ReadonlySet<SessionState> = new Set(['login-failed', 'password-expired', 'locked']);

/** The state after one observation (a new object; `state` is not changed). */
export function observe(state: Reachability, obs: Observation): Reachability {
  switch (obs.kind) {
    case 'session':
      if (REFUSED_STATES.has(obs.state)) return { ...state, refused: obs.error ?? refusalOf(obs.state) };
      if (obs.state === 'authenticated' || obs.state === 'idle') return state.refused ? { ...state, refused: undefined } : state;
      return state;
    case 'socket':
      return obs.state === 'connected' ? withTrack(state, 'A', answered(state.tracks.A)) : state;
    case 'request': {
      const track = state.tracks[obs.api];
      if (obs.error === undefined) return answeredAt(withTrack(state, obs.api, answered(track)), obs.api, obs.latest);
      if (obs.error.kind === 'tls') return withTrack(state, obs.api, { ...track, heard: true, unusable: obs.error });
      if (!isUnreachable(obs.error)) {
        return obs.error.kind === 'config' ? state : answeredAt(withTrack(state, obs.api, answered(track)), obs.api, obs.latest);
      }
      // a login that got no answer stops B too when B goes through the session (review70: an error poll of B
      // alone never went offline while every login was reset: each of its requests failed at the login, counted on A)
      const apis = obs.login ? APIS.filter((api) => api === obs.api || state.sessionApis.includes(api)) : [obs.api];
      let next = state;
      for (const api of apis) next = unanswered(next, api, obs.sent, obs.latest, obs.error);
      return next;
    }
  }
}

/** One unanswered request of `api`, counted unless the evidence was counted already or the instrument answered meanwhile. */
function unanswered(state: Reachability, api: Api, sent: number, latest: number, error: LhError): Reachability {
  const track = state.tracks[api];
  if (refusedFor(state, [api]) || sent <= track.countedUpTo || sent <= state.answeredUpTo[api]) return state;
  return withTrack(state, api, {
    ...track,
    heard: true,
    failures: track.failures + 1,
    reason: error.message,
    countedUpTo: latest,
  });
}

function answered(track: InterfaceTrack): InterfaceTrack {
  if (track.heard && track.failures === 0 && !track.unusable) return track;
  return { failures: 0, streak: track.failures > 0 ? track.failures : track.streak, countedUpTo: track.countedUpTo, heard: true };
}

/** Whether the session's refusal concerns one of `apis`. */
function refusedFor(state: Reachability, apis: readonly Api[]): boolean {
  return state.refused !== undefined && apis.some((api) => state.sessionApis.includes(api));
}

/** Notes that `api` answered when requests up to `latest` had been sent. */
function answeredAt(state: Reachability, api: Api, latest: number): Reachability {
  if (latest <= state.answeredUpTo[api]) return state;
  return { ...state, answeredUpTo: { ...state.answeredUpTo, [api]: latest } };
}

function withTrack(state: Reachability, api: Api, track: InterfaceTrack): Reachability {
  if (track === state.tracks[api]) return state;
  return { ...state, tracks: { ...state.tracks, [api]: track } };
}

function refusalOf(state: SessionState): LhError {
  return new LhError(`login refused (${state})`, { kind: 'auth', operation: 'authenticate' });
}

/** What a node that uses some interfaces sees of the server. */
export type ConnectionView =
  /** nothing heard yet */
  | { state: 'unknown' }
  /** answering; `failures` > 0 while some requests go unanswered, below the threshold */
  | { state: 'online'; failures: number; streak: number }
  /** `failures` unanswered requests in a row on `interfaces` (at least `offlineAfter`) */
  | { state: 'offline'; failures: number; reason?: string; interfaces: Api[] }
  /** answering but unusable: a refused login or an untrusted certificate */
  | { state: 'refused'; error: LhError };

/**
 * The view of the interfaces `apis`: refused first (a refusal never shows as offline), then offline when one of them
 * has `offlineAfter` failures in a row, then online once one of them was heard, else unknown.
 */
export function viewOf(state: Reachability, apis: readonly Api[], offlineAfter: number): ConnectionView {
  const tracks = apis.map((api) => ({ api, track: state.tracks[api] }));
  if (state.refused && refusedFor(state, apis)) return { state: 'refused', error: state.refused };
  const unusable = tracks.find((t) => t.track.unusable);
  if (unusable?.track.unusable) return { state: 'refused', error: unusable.track.unusable };
  const down = tracks.filter((t) => t.track.failures >= offlineAfter);
  if (down.length > 0) {
    return {
      state: 'offline',
      failures: Math.max(...down.map((t) => t.track.failures)),
      reason: down[0].track.reason,
      interfaces: down.map((t) => t.api),
    };
  }
  if (!tracks.some((t) => t.track.heard)) return { state: 'unknown' };
  return {
    state: 'online',
    failures: Math.max(0, ...tracks.map((t) => t.track.failures)),
    streak: Math.max(0, ...tracks.map((t) => t.track.streak)),
  };
}

/** What a watcher node last reported of the connection (kept in its memory, which outlives a redeploy). */
export type Reported = 'unknown' | 'online' | 'offline';

export interface ConnectionChange {
  state: 'online' | 'offline';
  failedPolls: number;
  reason?: string;
  interfaces?: Api[];
}

/**
 * The msg a watcher emits for a new view, once per change: offline when its view turns offline (and it did not
 * say so already), online when it answers again after offline. A refusal and the first answer say nothing.
 */
export function connectionChange(reported: Reported, view: ConnectionView): { reported: Reported; change?: ConnectionChange } {
  if (view.state === 'offline') {
    if (reported === 'offline') return { reported };
    return {
      reported: 'offline',
      change: { state: 'offline', failedPolls: view.failures, reason: view.reason, interfaces: view.interfaces },
    };
  }
  if (view.state !== 'online' || view.failures > 0) return { reported };
  if (reported === 'offline') return { reported: 'online', change: { state: 'online', failedPolls: view.streak } };
  return { reported: 'online' };
}

/** The configured number of unreachable polls before offline: an integer >= 1, else the default 3. */
export function offlineAfterOf(value: unknown): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : DEFAULT_OFFLINE_AFTER;
}
