/**
 * The connection state an lh-server node owns and publishes to every node that uses it, as core's MQTT broker node
 * tells its in/out nodes: it hears its client (each request's outcome, the event sockets, the session) and folds what
 * it hears with connection-state.ts; subscribers get their view whenever it changes. The lh-server creates one per
 * deploy and closes it with itself; a node unsubscribes when it closes, so redeploys leave no listener behind.
 */
import { type LiquidHandlerClient, type SessionState } from '../../client';
import {
  type Api,
  APIS,
  type ConnectionView,
  DEFAULT_OFFLINE_AFTER,
  newReachability,
  type Observation,
  observe,
  type Reachability,
  viewOf,
} from './connection-state';

export interface ConnectionSubscription {
  /** the interfaces the node uses (its view is offline when one of them is) */
  apis: readonly Api[];
  /**
   * the node's configured threshold (lh-error-poll, lh-run-watch): its own view (its msgs) goes offline at it; the
   * shared view (every node's status) at the smallest of all subscribers
   */
  offlineAfter?: number;
  /**
   * called whenever the node's shared view (`view`, for its status) or its own view (`own`, by its own threshold, for
   * its msgs) changes; not with the current ones: read `view()` for those
   */
  onChange(view: ConnectionView, own: ConnectionView): void;
}

interface Seen {
  view: ConnectionView;
  own: ConnectionView;
}

/** What the instrument as a whole went through: the lh-server says it once in the log (not every node, every poll). */
export type Reachable = { state: 'offline'; reason?: string; interfaces: Api[] } | { state: 'online' };

/** The session's requests that send the credentials (and those held back in their place, Transport.heldBack). */
const LOGIN_OPERATIONS: ReadonlySet<string> = new Set(['authenticate', 'renew-token']);

export class ServerConnection {
  private state: Reachability = newReachability();
  /** the interfaces the attached client uses: A, and B when it has one */
  private apis: readonly Api[] = APIS;
  private readonly subscriptions = new Map<ConnectionSubscription, Seen>();
  private detach: (() => void)[] = [];
  /** the last overall state told to `reachability` (offline is told once until online again, and back) */
  private told: 'online' | 'offline' = 'online';

  /**
   * `warn` hears a subscriber that threw (the others are told all the same); `reachability` hears the instrument going
   * offline (every interface it uses, by the threshold in force) once, and online again once after that.
   */
  constructor(
    private readonly warn: (err: unknown) => void = () => undefined,
    private readonly reachability: (change: Reachable) => void = () => undefined,
  ) {}

  /** Hears `client` until close(). */
  attach(client: LiquidHandlerClient): void {
    // B with its own instrument token is not stopped by a refused login: it is watched as usual then; an lh-server
    // without B uses A alone: a login that gets no answer is no outage of a B it does not have (the outage line said
    // "A and B" for it)
    this.apis = client.hasInstrumentInterface ? APIS : ['A'];
    this.state = newReachability(client.instrumentUsesSession ? this.apis : ['A']);
    this.detach.push(
      client.onRequestOutcome((o) =>
        this.observe({
          kind: 'request',
          api: o.api,
          sent: o.sent,
          latest: o.latest,
          error: o.error,
          login: LOGIN_OPERATIONS.has(o.operation),
        }),
      ),
      client.events.onState((change) => {
        if (change.channel === 'events' || change.channel === 'errors') this.observe({ kind: 'socket', state: change.state });
      }),
    );
    const onSession = (state: SessionState): void =>
      this.observe({ kind: 'session', state, error: client.session.loginBlockedBy });
    client.on('session', onSession);
    this.detach.push(() => client.off('session', onSession));
    const current = client.session.state; // a node may have logged in before the state was attached
    if (current !== 'idle') onSession(current);
  }

  /** The threshold in force: the smallest configured by a subscriber, else the default 3. */
  get offlineAfter(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const s of this.subscriptions.keys()) if (s.offlineAfter !== undefined) min = Math.min(min, s.offlineAfter);
    return Number.isFinite(min) ? min : DEFAULT_OFFLINE_AFTER;
  }

  /** The current view of `apis`, by the threshold in force, or by `offlineAfter` when given (a node's own view). */
  view(apis: readonly Api[] = this.apis, offlineAfter?: number): ConnectionView {
    return viewOf(this.state, apis, offlineAfter ?? this.offlineAfter);
  }

  /** Folds one observation in and tells every subscriber whose view changed. */
  observe(observation: Observation): void {
    const next = observe(this.state, observation);
    if (next === this.state) return;
    const viewsMayChange = next.tracks !== this.state.tracks || next.refused !== this.state.refused;
    this.state = next;
    if (!viewsMayChange) return; // an answer that only moves answeredUpTo changes no view: no work per request
    this.publish();
    this.tellReachability();
  }

  private tellReachability(): void {
    const view = this.view(this.apis);
    const now = view.state === 'offline' ? 'offline' : view.state === 'online' ? 'online' : undefined;
    if (now === undefined || now === this.told) return;
    this.told = now;
    try {
      this.reachability(
        view.state === 'offline' ? { state: 'offline', reason: view.reason, interfaces: view.interfaces } : { state: 'online' },
      );
    } catch (err) {
      this.warn(err);
    }
  }

  /** Subscribes a node; returns the unsubscribe (call it when the node closes). */
  subscribe(subscription: ConnectionSubscription): () => void {
    this.subscriptions.set(subscription, this.seenBy(subscription, this.offlineAfter));
    this.publish(); // a lower threshold may change the others' views
    this.tellReachability();
    return () => {
      if (this.subscriptions.delete(subscription)) this.publish();
    };
  }

  /** How many nodes are subscribed (a redeploy must leave none of the closed ones). */
  get subscriberCount(): number {
    return this.subscriptions.size;
  }

  /** Stops hearing the client and drops every subscriber. */
  close(): void {
    for (const off of this.detach.splice(0)) off();
    this.subscriptions.clear();
  }

  private seenBy(subscription: ConnectionSubscription, offlineAfter: number): Seen {
    const view = viewOf(this.state, subscription.apis, offlineAfter);
    const ownAfter = subscription.offlineAfter ?? offlineAfter;
    return { view, own: ownAfter === offlineAfter ? view : viewOf(this.state, subscription.apis, ownAfter) };
  }

  private publish(): void {
    const offlineAfter = this.offlineAfter;
    for (const [subscription, last] of [...this.subscriptions]) {
      if (!this.subscriptions.has(subscription)) continue; // unsubscribed by an earlier listener of this round
      const seen = this.seenBy(subscription, offlineAfter);
      if (sameView(seen.view, last.view) && sameView(seen.own, last.own)) continue;
      this.subscriptions.set(subscription, seen);
      try {
        subscription.onChange(seen.view, seen.own);
      } catch (err) {
        this.warn(err); // one node's failure is its own: the others (and the request that fed the state) go on
      }
    }
  }
}

function sameView(a: ConnectionView, b: ConnectionView): boolean {
  if (a.state !== b.state) return false;
  switch (a.state) {
    case 'unknown':
      return true;
    case 'online':
      return b.state === 'online' && a.failures === b.failures && a.streak === b.streak;
    case 'offline':
      return b.state === 'offline' && a.failures === b.failures && a.interfaces.join() === b.interfaces.join();
    case 'refused':
      return b.state === 'refused' && a.error === b.error;
  }
}
