/**
 * lh-state's behaviour, apart from its Node-RED wiring: it folds the lab events of one instrument into its state
 * document, emits the document when it changed (at most `perSecond` a second, the latest always last) and one msg
 * per error and run event; with coordination, only while this Node-RED holds the instrument's lease, and the current
 * document at once when it becomes the holder.
 */
import { instrumentIdentity } from '../../coordination/instrument-identity';
import { type ErrorSource, type LabEvent, onLabEvent } from '../../observe/lab-events';
import { admit, type RateGate } from '../../observe/rate-gate';
import { fold, newMemory, shownError, type StateDocument, type StateMemory, topicLevel } from '../../observe/state-document';

export type StateMsg = {
  topic: string;
  payload: unknown;
  retain: boolean;
  qos: 0 | 1 | 2;
  instrument: string;
  /** MQTT 5: the broker forgets the retained document after this many seconds unless it is sent again */
  messageExpiryInterval?: number;
};

export interface StateNodeOptions {
  instrumentKey: string;
  instrument: string;
  /** MQTT topic of the document; `{{instrument}}` is the instrument's name as one topic level */
  stateTopic: string;
  /** prefix of the event topics: `<prefix>/errors/<source>-<id>`, `<prefix>/runs` */
  eventTopic: string;
  perSecond: number;
  /**
   * MQTT 5 message expiry of a document (seconds): a document not sent again within it leaves the broker (its
   * instrument removed, its Node-RED stopped). Absent: kept until replaced.
   */
  expirySeconds?: number;
  /** whether this Node-RED may emit now (the lease holder, or no coordination) */
  emitting: () => boolean;
  send: (state: StateMsg | null, event: StateMsg | null) => void;
  /** the longest a document waits for a poll's errors (a flow without an error watch still gets one); default 10 s */
  pollWaitMs?: number;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

const ALL_SOURCES: readonly ErrorSource[] = ['A', 'B'];
/** the other lh-server keys whose verdict a state node keeps (a fleet's, then forgotten and decided again) */
const MAX_KEYS = 2000;
/** the longest a change told in several events holds the document (its closing event lost, the gate stuck) */
const CHANGE_WAIT_MS = 10_000;

function topicOf(template: string, instrument: string): string {
  return template.split('{{instrument}}').join(topicLevel(instrument));
}

export class StateNode {
  private memory: StateMemory;
  private readonly gate: RateGate = { held: false };
  private timer: unknown;
  private pollWait: unknown;
  private lastSent?: StateDocument;
  private readonly stop: () => void;
  private readonly now: () => number;
  /**
   * Documents are held until the errors of a first poll are in: a document made before that would say "0 pending"
   * while errors wait (at a deploy, and on a new lease holder, whose watch did not poll while it stood by).
   */
  private awaiting = false;
  /** the next document goes out even if it is the one sent last */
  private force = false;
  /**
   * A change told in several events is half told (an event marked `more` came, its last one or 'settled' not yet): the
   * timer that ends the wait. No document goes out meanwhile, whatever asks (the rate timer, another event, emitNow):
   * coordinated, a Redis round trip lies between two events of a change.
   */
  private changeWait: unknown;
  /** the changes half told (their `change` ids; undefined: one told without) */
  private readonly openChanges = new Set<number | undefined>();
  /** emitNow was asked while a change was half told: the document at once when it is in */
  private nowAfterChange = false;
  /** what `emitting()` said when last asked by roleChanged */
  private wasEmitting: boolean;
  /** the sources an errors event ever listed here (two poll nodes of one instrument may poll one each) */
  private readonly polledSources = new Set<ErrorSource>();
  /** the sources listed since `awaitPoll`: the wait ends once every source in `polledSources` is among them */
  private readonly listedSinceAwait = new Set<ErrorSource>();

  /** the instrument's identity, however its lh-server spells the URLs */
  private readonly identity: string;
  /** other lh-server keys heard: whether each names this instrument */
  private readonly otherKeys = new Map<string, boolean>();

  constructor(private readonly o: StateNodeOptions) {
    this.identity = instrumentIdentity(o.instrumentKey);
    this.now = o.now ?? Date.now;
    this.wasEmitting = o.emitting();
    this.memory = newMemory(o.instrument, this.now());
    this.stop = onLabEvent((event) => {
      if (this.isMine(event.instrumentKey)) this.take(event);
    });
  }

  /**
   * Whether a lab event names this node's instrument: its lh-server's key, or another lh-server's whose URLs spell
   * the same instrument (`HTTP://localhost:8080/` and `http://127.0.0.1:8080`: one home, one session, one
   * coordination identity). Decided once per key (at most MAX_KEYS kept, then forgotten and decided again).
   */
  private isMine(instrumentKey: string): boolean {
    if (instrumentKey === this.o.instrumentKey) return true;
    let mine = this.otherKeys.get(instrumentKey);
    if (mine === undefined) {
      if (this.otherKeys.size >= MAX_KEYS) this.otherKeys.clear();
      mine = instrumentIdentity(instrumentKey) === this.identity;
      this.otherKeys.set(instrumentKey, mine);
    }
    return mine;
  }

  get document(): StateDocument {
    return this.memory.doc;
  }

  take(event: LabEvent): void {
    // a role change may come before lh-state's own role listener runs (lh-server's listener publishes first)
    this.roleChanged();
    // the lease came here: what this Node-RED knew of the errors is from when it last polled; hold the document until
    // the new holder's watch polled (lh-server tells this event before lh-state's own role listener runs)
    if (event.kind === 'lease' && event.holder) this.awaitPoll();
    this.memory = fold(this.memory, event, this.now());
    if (this.o.emitting()) this.sendEvent(event);
    if (event.kind === 'errors') {
      for (const source of event.sources ?? ALL_SOURCES) {
        this.polledSources.add(source);
        this.listedSinceAwait.add(source);
      }
    }
    // a poll of one source leaves another source's errors as this node knew them (as a standby: old, or nothing)
    const polledAll = [...this.polledSources].every((source) => this.listedSinceAwait.has(source));
    if (this.awaiting && event.kind === 'errors' && polledAll) {
      // the first document that knows the errors: at once (within the rate: a lease that comes and goes quickly
      // does not multiply documents), even when it says what this node sent before (another may have sent since)
      this.awaiting = false;
      this.clearPollWait();
      this.force = true;
    }
    // one change told in several events (an id reused: resolved, then raised): the document once they are all in
    if ((event.kind === 'raised' || event.kind === 'resolved') && event.more) {
      this.openChanges.add(event.change);
      if (this.changeWait === undefined) this.changeWait = this.setTimer(() => this.changeDone(), CHANGE_WAIT_MS);
      return;
    }
    // a change ends with its last event or 'settled' (another change told meanwhile goes on)
    if (event.kind === 'raised' || event.kind === 'resolved' || event.kind === 'settled') {
      this.openChanges.delete(event.change);
      if (this.changeWait !== undefined && this.openChanges.size === 0) return this.changeDone();
    }
    this.offer();
  }

  /** The change half told is in (or waited for long enough): the document it held. */
  private changeDone(): void {
    if (this.changeWait !== undefined) this.clearTimer(this.changeWait);
    this.changeWait = undefined;
    this.openChanges.clear();
    if (!this.nowAfterChange) return this.offer();
    this.nowAfterChange = false;
    this.emitNow();
  }

  /**
   * The coordination's role changed. A Node-RED that starts emitting (the lease taken, or Redis lost: every replica
   * watches and says what it sees) holds its document until its watch polled: a standby never polled, so what it knows
   * of the errors is old or nothing, and a machine read or a connection change would otherwise send "0 pending".
   */
  roleChanged(): void {
    const now = this.o.emitting();
    if (now && !this.wasEmitting) this.awaitPoll();
    this.wasEmitting = now;
  }

  /** Hold documents until a poll's errors are in (`stopAwaiting` ends it without one: no watch node polls). */
  awaitPoll(): void {
    this.awaiting = true;
    this.listedSinceAwait.clear();
    this.clear();
    this.clearPollWait();
    this.pollWait = this.setTimer(() => {
      this.pollWait = undefined;
      this.stopAwaiting();
    }, this.o.pollWaitMs ?? 10_000);
  }

  stopAwaiting(): void {
    this.clearPollWait();
    if (!this.awaiting) return;
    this.awaiting = false;
    this.emitNow();
  }

  private setTimer(fn: () => void, ms: number): unknown {
    return (this.o.setTimer ?? ((f, t) => setTimeout(f, t)))(fn, ms);
  }

  private clearTimer(handle: unknown): void {
    (this.o.clearTimer ?? ((h) => clearTimeout(h as NodeJS.Timeout)))(handle);
  }

  private clearPollWait(): void {
    if (this.pollWait !== undefined) this.clearTimer(this.pollWait);
    this.pollWait = undefined;
  }

  /** The lease came to this Node-RED (or a deploy): the current document at once, whatever the rate. */
  emitNow(): void {
    if (!this.o.emitting() || this.awaiting) return;
    if (this.changeWait !== undefined) {
      this.nowAfterChange = true;
      return;
    }
    this.clear();
    this.gate.lastAt = this.now();
    this.lastSent = this.memory.doc;
    this.force = false;
    this.o.send(this.stateMsg(this.memory.doc), null);
  }

  /**
   * The current document asked for again (an input msg, the repeat, the resend after a deploy): at once, or when the
   * rate's gap ends (a storm of input msgs sends at most `perSecond` documents a second, the current one last).
   */
  resend(): void {
    if (!this.o.emitting() || this.awaiting) return;
    this.force = true;
    this.offer();
  }

  /** `due`: the rate's timer fired, the gap has passed on the timers' clock, whatever the wall clock says */
  private offer(due = false): void {
    if ((this.memory.doc === this.lastSent && !this.force) || !this.o.emitting() || this.awaiting) return;
    if (this.changeWait !== undefined) return; // the change's last event offers
    const verdict = due ? 'now' : admit(this.gate, this.now(), this.o.perSecond);
    if (verdict === 'now') return this.emitNow();
    if (this.gate.held) return; // the timer sends the latest document when the gap ends
    this.gate.held = true;
    this.timer = this.setTimer(() => {
      this.timer = undefined;
      this.gate.held = false;
      this.offer(true);
    }, verdict);
  }

  private clear(): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.timer = undefined;
    this.gate.held = false;
  }

  /** The topic of this node's document. */
  get topic(): string {
    return topicOf(this.o.stateTopic, this.o.instrument);
  }

  private stateMsg(doc: StateDocument): StateMsg {
    return {
      topic: this.topic,
      payload: doc,
      retain: true,
      qos: 1,
      instrument: this.o.instrument,
      ...(this.o.expirySeconds ? { messageExpiryInterval: this.o.expirySeconds } : {}),
    };
  }

  /**
   * An empty retained msg on `topic` (MQTT's way of deleting a retained msg): the instrument left the flows, or its
   * document moved to another topic. Only the one that emits sends it (a standby's broker view is the holder's).
   */
  clearRetained(topic: string): void {
    if (!this.o.emitting()) return;
    this.o.send({ topic, payload: '', retain: true, qos: 1, instrument: this.o.instrument }, null);
  }

  private sendEvent(event: LabEvent): void {
    const prefix = topicOf(this.o.eventTopic, this.o.instrument);
    const at = new Date(this.now()).toISOString();
    const msg = (topic: string, payload: Record<string, unknown>): StateMsg => ({
      topic,
      payload: { ...payload, at },
      retain: false,
      qos: 1,
      instrument: this.o.instrument,
    });
    switch (event.kind) {
      case 'raised':
      case 'resolved': {
        const e = shownError(event.error); // bounded as in the document (an instrument's title may be any length)
        const id = topicLevel(`${e.source}-${e.id}`);
        const extra = event.kind === 'raised' && event.redelivered ? { redelivered: true } : {};
        this.o.send(null, msg(`${prefix}/errors/${id}`, { event: event.kind, ...e, ...extra }));
        return;
      }
      case 'run':
        if (event.started) this.o.send(null, msg(`${prefix}/runs`, { event: 'started', protocol: event.protocol ?? null }));
        return;
      case 'run-finished':
        this.o.send(null, msg(`${prefix}/runs`, { event: 'finished', result: event.result }));
        return;
      default:
        return;
    }
  }

  close(): void {
    this.clear();
    this.clearPollWait();
    if (this.changeWait !== undefined) this.clearTimer(this.changeWait);
    this.changeWait = undefined;
    this.stop();
  }
}
