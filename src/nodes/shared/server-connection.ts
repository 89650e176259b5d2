/**
 * The connection state an lh-server node owns and publishes to every node that uses it, as core's MQTT broker node
 * tells its in/out nodes: it hears its client (each request's outcome, the event sockets, the session) and folds what
 * it hears with connection-state.ts; subscribers get their view whenever it changes. The lh-server creates one per
 * deploy and closes it with itself; a node unsubscribes when it closes, so redeploys leave no listener behind.
 */
import { LiquidHandlerClient, SessionState } from '../../client';
import { Api, APIS, ConnectionView, DEFAULT_OFFLINE_AFTER, newReachability, Observation, observe, Reachability, viewOf } from './connection-state';

export interface ConnectionSubscription {
  /** the interfaces the node uses (its view is offline when one of them is) */
  apis: readonly Api[];
  /** the node's configured threshold (lh-error-poll, lh-run-watch); the smallest of all subscribers applies */
  offlineAfter?: number;
  /** called with the node's view whenever it changes (not with the current one: read `view()` for that) */
  onChange(view: ConnectionView): void;
}

export class ServerConnection {
  private state: Reachability = newReachability();
  private readonly subscriptions = new Map<ConnectionSubscription, ConnectionView>();
  private detach: (() => void)[] = [];

  /** Hears `client` until close(). */
  attach(client: LiquidHandlerClient): void {
    this.detach.push(
      client.onRequestOutcome((o) => this.observe({ kind: 'request', api: o.api, sent: o.sent, latest: o.latest, error: o.error })),
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

  /** The current view of `apis`. */
  view(apis: readonly Api[] = APIS): ConnectionView {
    return viewOf(this.state, apis, this.offlineAfter);
  }

  /** Folds one observation in and tells every subscriber whose view changed. */
  observe(observation: Observation): void {
    const next = observe(this.state, observation);
    if (next === this.state) return;
    this.state = next;
    this.publish();
  }

  /** Subscribes a node; returns the unsubscribe (call it when the node closes). */
  subscribe(subscription: ConnectionSubscription): () => void {
    this.subscriptions.set(subscription, viewOf(this.state, subscription.apis, this.offlineAfter));
    this.publish(); // a lower threshold may change the others' views
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

  private publish(): void {
    const offlineAfter = this.offlineAfter;
    for (const [subscription, last] of [...this.subscriptions]) {
      if (!this.subscriptions.has(subscription)) continue; // unsubscribed by an earlier listener of this round
      const view = viewOf(this.state, subscription.apis, offlineAfter);
      if (sameView(view, last)) continue;
      this.subscriptions.set(subscription, view);
      subscription.onChange(view);
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
