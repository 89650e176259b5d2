/**
 * One lh-error-poll node's watch at run time (issue 30 point 3: `register` wires, this class behaves): the poll loop and
 * its slot, the pushed frames and the socket, the memory of seen errors (saved in the user directory or a context
 * store), the coordination gate, the deck photos, the connection msgs and the status. Decisions are pure
 * (poll-decisions.ts, push-decisions.ts).
 */
import {
  asLhError,
  EMPTY_LIST_REASON,
  type ErrorFrame,
  type EventStateChange,
  firmwareErrorsFromFrame,
  identityOf,
  type InstrumentEvent,
  type LhError,
  type LiquidHandlerClient,
  MAX_ERRORS_PER_FRAME,
} from '../../client';
import { offerFirmwareErrors } from '../answering/open-firmware-errors';
import { severityFilter } from '../answering/severity';
import { photoRoom, type SnapshotHook, snapshotHook, snapshotTaker } from '../deck/snapshot';
import { type Api, connectionChange, type ConnectionView } from '../shared/connection-state';
import { coordinationStatus, gateFor, listedKeysOf, markLost } from '../shared/coordinated-poll';
import { connectionMessage, errorKey, raisedMessage, resolvedMessage } from '../shared/error-messages';
import { type InstrumentInfo } from '../shared/error-records';
import { LabPublisher, newChange } from '../shared/lab-publish';
import { LivePolls } from '../shared/live-polls';
import { logInfo, loginRefusalOf, logWarn, serverSaysIt } from '../shared/node-log';
import { type Node, type NodeConfig, type Red } from '../shared/node-red';
import { oneLine } from '../shared/one-line';
import { onPasswordWarning, passwordExpiryMessage } from '../shared/password-warning';
import { intervalMs, PollLoop } from '../shared/poll-loop';
import { type PolledError } from '../shared/poll-messages';
import { pollPermits } from '../shared/poll-permits';
import { pollSchedule } from '../shared/poll-schedule';
import { type LhServerNode } from '../shared/server-node';
import { type Status } from '../shared/status';
import { isChecked, templateProblem } from '../shared/typed-inputs';
import {
  applyPoll,
  newPollMemory,
  offlineAfterOf,
  pendingOnly,
  type PollRules,
  type SourceResult,
  type StatusDecision,
} from './poll-decisions';
import {
  adoptListed,
  adoptPushed,
  applyErrorFrame,
  followUpNeeded,
  forgetResolvedElsewhere,
  listenOf,
  MAX_OPEN_FIRMWARE,
  openFirmwareErrors,
  openFirmwareRecord,
  openFirmwareRecords,
  photoAhead,
  type PushOutcome,
  reactToSocket,
  resolveAnswered,
  settledByFrame,
  type SocketState,
  UnpolledFrames,
  withFirmwareErrors,
  withoutResolvedMeanwhile,
} from './push-decisions';
import { forgetWatch, readSavedWatch, savedWatch, type Source, type UnsentError, watchKey, type WatchState } from './seen-errors';
import { seenFileStore } from './seen-file';

const CONTEXT_KEY = 'lhErrorPoll';
/** Watches (instrument and node, across redeploys) whose log already said the instrument has no errors socket. */
const saidUnavailable = new WeakSet<WatchState>();
/** Watches whose log already said that open firmware errors beyond the cap were forgotten. */
const saidDropped = new WeakSet<WatchState>();
/** the watches whose log said a frame on instincterrors was not read as an error (once per instrument memory) */
const saidNotRead = new WeakSet<WatchState>();
/** the watches whose log said a frame listed more errors than are read from one (once, apart from saidNotRead) */
const saidLeftOut = new WeakSet<WatchState>();
/** Saves after pushed frames wait this long, folding a flood of frames into one write of the context store. */
const FRAME_SAVE_DELAY_MS = 1000;
/**
 * How long a close waits for the msgs under way to be handed to the next instance: a raised msg's photo (at most 2 s)
 * and, coordinated, a Redis round trip. Node-RED starts the redeployed node once every node closed.
 */
const CLOSE_WAIT_MS = 3000;
/** Frames kept while a poll's request is under way (to drop a needless follow-up); beyond, the follow-up runs. */
const MAX_HEARD_FRAMES = 32;

/** One source's pending errors, or why it did not answer (never throws). */
async function fetchErrors(client: LiquidHandlerClient, source: Source): Promise<SourceResult<PolledError>> {
  try {
    const list = source === 'A' ? await client.prep.pendingErrors() : await client.instrument.unhandledErrors();
    return { source, records: pendingOnly<PolledError>(list) };
  } catch (err) {
    return { source, error: asLhError(err, source === 'A' ? 'check-for-pending-errors' : 'unhandled-errors') };
  }
}

/** Whether this Node-RED answered the error `record` names (not another error under its id), now or before it was over. */
function answeredHere(client: LiquidHandlerClient, key: string, record: unknown): boolean {
  const identity = identityOf(record);
  const ledger = client.answers.a;
  return (ledger.lookup(key, identity) ?? ledger.lookupPast(key, identity))?.outcome === 'answered';
}

export interface Watcher {
  node: Node;
  status: Status;
  client: LiquidHandlerClient;
  server: LhServerNode;
  instrument: InstrumentInfo;
  watch: WatchState;
  sources: Source[];
  config: NodeConfig;
}

type SeenFile = ReturnType<typeof seenFileStore>;

export class ErrorWatch {
  private readonly node: Node;
  private readonly status: Status;
  private readonly client: LiquidHandlerClient;
  private readonly server: LhServerNode;
  private readonly watch: WatchState;
  private readonly sources: Source[];
  private readonly instrument: InstrumentInfo;
  private readonly rules: PollRules<PolledError>;
  private readonly template: string;
  /** why the Notification template cannot be rendered; reported once, with the first raised msg, then cleared */
  private templateRefusal?: LhError;
  private readonly persist: boolean;
  private readonly store?: string;
  private readonly memoryFile?: SeenFile;
  private readonly memory = newPollMemory();
  private readonly snapshots: SnapshotHook;
  private readonly lab: LabPublisher;
  readonly loop: PollLoop;
  private readonly slot: ReturnType<typeof pollSchedule.join>;
  private readonly listening: boolean;
  private socket: SocketState = 'connecting';
  private readonly livePolls: LivePolls;
  private lastStatus?: StatusDecision;
  /** several Node-REDs (lh-coordination): only the lease holder polls and emits, each error once across replicas */
  private readonly gate?: ReturnType<typeof gateFor<PolledError>>;
  private readonly offCoordination?: () => void;
  private readonly offPassword: () => void;
  /** what listen() subscribed (the socket's state and frames, the open firmware errors offered) */
  private offListening?: (() => void)[];
  private saveTimer?: NodeJS.Timeout;
  /** the msgs of the change told last (emit): the next change's wait for them */
  private emitting: Promise<void> = Promise.resolve();
  /**
   * Coordinated, the msgs the gate passed, in the order it passed them: each is sent once its photo (a raised msg's,
   * at most 2 s) is in, and never before a msg passed earlier. The gate's next step does not wait for the photo.
   */
  private sending: Promise<unknown> = Promise.resolve();
  /**
   * Set by close(): what this node sends from then on (msgs waiting for their deck photo, up to 2 s; coordinated, for a
   * Redis round trip) goes to its next instance (`watch.unsent`), not to a flow Node-RED stopped: the memory (and,
   * coordinated, Redis) already took those errors as reported, so a msg dropped now would never be sent.
   */
  private closing = false;
  /** the frames heard while this node's poll request is under way (undefined between requests) */
  private heard?: ErrorFrame[];
  /** the ids frames that asked for a poll may have announced listed, until a poll requested after them is applied */
  private readonly unpolled = new UnpolledFrames();
  /** the last write of the memory asked for (close waits for it: a restart reads what it wrote) */
  private written: Promise<void> = Promise.resolve();

  constructor(
    private readonly RED: Red,
    w: Watcher,
  ) {
    ({ node: this.node, status: this.status, client: this.client, server: this.server, watch: this.watch } = w);
    ({ sources: this.sources, instrument: this.instrument } = w);
    const { config, node, client } = w;
    const wanted = severityFilter(config.minSeverity);
    this.rules = {
      baseMs: intervalMs(config.interval),
      offlineAfter: offlineAfterOf(config.offlineAfter),
      keyOf: errorKey,
      wanted: (record) => wanted(record.severity),
    };
    this.template = typeof config.template === 'string' ? config.template : '';
    // a template that cannot be rendered: each error goes out with the default notification (error-messages.ts), and
    // the refusal naming the setting reaches Catch nodes with the first one
    this.templateRefusal = templateProblem(this.template, 'template', node.type);
    this.persist = isChecked(config.persist);
    this.store = typeof config.store === 'string' && config.store.trim() !== '' ? config.store.trim() : undefined;
    // Remember without a chosen context store: a file in the user directory (the default context store is memory,
    // emptied on every stop); without a user directory (an embedded runtime), the default context store as before
    const userDir = typeof RED.settings.userDir === 'string' ? RED.settings.userDir : '';
    this.memoryFile = this.persist && !this.store && userDir !== '' ? seenFileStore(userDir, node.id) : undefined;
    // a deck photo with each raised error (issue 33): waits at most 2 s, never stops the msg (src/nodes/deck/snapshot.ts);
    // none while polls wait for permits (issue 31: a burst across the fleet, where it would add to the wait) or beyond
    // MAX_PHOTOS_IN_FLIGHT camera requests: the msg goes on without one, saying why
    this.snapshots = snapshotHook(
      isChecked(config.snapshot) ? snapshotTaker(client) : undefined,
      (t) => logWarn(node, t),
      photoRoom,
    );
    this.lab = new LabPublisher(w.server, this.instrument); // lh-state and the metrics read what this watch sees
    // at most MAX_POLLS_IN_FLIGHT polls of this Node-RED at a time
    this.loop = new PollLoop((started) => this.pollOnce(started), pollPermits);
    // this node's slot among every poll loop of this Node-RED with the same interval: a fleet polls spread, not together
    this.slot = pollSchedule.join(watchKey(w.server.instrumentKey, node.id), this.rules.baseMs);
    this.listening = listenOf(config.listen) && this.sources.includes('A');
    this.livePolls = new LivePolls(this.loop); // a reconnect polls at once; pushes at once or folded, within a budget
    this.gate = gateFor(w.server, node.id, this.rules);
    if (this.gate && w.server.coordination) {
      const gate = this.gate;
      this.offCoordination = w.server.coordination.onChange(() => {
        if (!gate.active) this.showStatus(this.lastStatus ?? { kind: 'pending', count: 0 });
        this.loop.trigger();
      });
    }
    // once a day while the password is about to expire, on the connection output
    this.offPassword = onPasswordWarning(
      client,
      (warning) => {
        this.deliver([null, null, passwordExpiryMessage(warning, this.instrument)]);
        this.lab.password(warning.daysLeft);
      },
      `poll ${node.id}`,
    );

    this.status.idle('polling');
    this.status.follow(w.server.connection, {
      apis: this.sources as Api[],
      offlineAfter: this.rules.offlineAfter,
      onChange: (view) => this.onConnection(view),
    });
    if (this.persist && !this.watch.restored) {
      this.readMemory((err, value) => {
        if (err) node.warn(RED._('lh-error-poll.errors.persist', { message: err.message }));
        else this.restore(value);
        this.begin();
      });
    } else {
      this.begin();
    }
  }

  /** Stops watching; a node deleted from the flows forgets (its file too), a redeploy or a stop keeps its memory. */
  close(removed: boolean, done: () => void): void {
    this.closing = true;
    // a redeploy or a stop keeps the file (after the saves queued so far; a save on close is dropped)
    const removal = this.memoryFile && removed ? this.memoryFile.remove() : undefined;
    this.slot.leave();
    this.offCoordination?.();
    if (this.offListening) {
      for (const unsubscribe of this.offListening.splice(0)) unsubscribe();
      this.livePolls.stop();
      if (this.saveTimer) this.save(); // what the last frames changed is kept
    }
    this.offPassword();
    this.loop.stop();
    if (removed) forgetWatch(this.server.instrumentKey, this.node.id);
    // the msgs under way are handed to the next instance before it starts (a redeploy waits for this close), within
    // CLOSE_WAIT_MS: one that comes later is still handed over, and goes out with the next instance's next poll
    const handedOver = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_WAIT_MS);
      void Promise.all([this.emitting, this.sending]).then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    // and what is saved then leaves the msgs handed over out (savedWatch): a stop has no next instance, the next start
    // reads the saved memory
    const saved = handedOver.then(() => this.written);
    const finished = removal ? Promise.all([removal, saved]) : saved;
    finished.then(done, done);
  }

  /**
   * Sends `out` after what a closed instance of this node left unsent; once this node is closing, hands it to the
   * next instance instead (see `closing`; a node deleted from the flows has none, and its msgs go with it).
   * Coordinated, `release` lets the gate settle the msg's claim once it is sent (here, or by the next instance): a
   * stop before leaves the claim unsettled, and the next holder sends it again, marked.
   */
  private deliver(out: Parameters<Node['send']>[0], errors: UnsentError[] = [], release?: () => void): void {
    if (this.closing) {
      (this.watch.unsent ??= []).push({ out, errors, ...(release ? { release } : {}) });
      if (errors.length > 0) this.save(); // a stop takes the msg with it: the saved memory must not say it went out
      return;
    }
    this.sendUnsent();
    this.node.send(out);
    release?.();
  }

  /** What a closed instance of this node handed over (`deliver`): sent first, in its order, once. */
  private sendUnsent(): void {
    const unsent = this.watch.unsent;
    if (this.closing || !unsent || unsent.length === 0) return;
    this.watch.unsent = undefined;
    for (const { out, release } of unsent) {
      this.node.send(out);
      release?.();
    }
    if (unsent.some((u) => u.errors.length > 0)) this.save(); // sent now: saved as reported
  }

  /** A polled error's part in a msg handed over (see `deliver`); none for a pushed firmware error (never saved). */
  private unsentError(list: UnsentError['list'], source: string, record: unknown, polled: boolean): UnsentError[] {
    if (!polled || (source !== 'A' && source !== 'B')) return [];
    const id = this.rules.keyOf(source, record as PolledError);
    return id === undefined ? [] : [{ list, source, id, record }];
  }

  // ---- the memory of seen errors

  private writeMemory(value: unknown, callback: (err: Error | undefined) => void): void {
    if (this.memoryFile) this.memoryFile.set(value, callback);
    else this.node.context().set(CONTEXT_KEY, value, this.store, callback);
  }

  private readMemory(callback: (err: Error | undefined, value: unknown) => void): void {
    if (this.memoryFile) this.memoryFile.get(callback);
    else this.node.context().get(CONTEXT_KEY, this.store, callback);
  }

  /** A save after a pushed frame: one write for all frames within FRAME_SAVE_DELAY_MS (a poll's save takes it over). */
  private saveSoon(): void {
    if (!this.persist || this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.save();
    }, FRAME_SAVE_DELAY_MS);
  }

  private save(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    if (!this.persist) return;
    this.written = new Promise((resolve) =>
      this.writeMemory(savedWatch(this.watch, this.server.instrumentKey), (err) => {
        if (err) this.node.warn(this.RED._('lh-error-poll.errors.persist', { message: err.message }));
        resolve();
      }),
    );
  }

  private restore(value: unknown): void {
    this.watch.restored = true;
    const saved = readSavedWatch(value, this.server.instrumentKey);
    if (!saved) return;
    this.watch.sources.A.restore(saved.A);
    this.watch.sources.B.restore(saved.B);
  }

  // ---- polling

  private begin(): void {
    if (this.loop.stopped) return; // closed while the memory was read
    this.slot.catchUp((since) => this.loop.catchUp(since)); // the first poll: a deploy of many nodes paces its first polls
    if (this.listening) this.listen();
  }

  private async pollOnce(started: number): Promise<number> {
    const { gate, rules, watch, client, sources } = this;
    // what a closed instance handed over, whatever the role now (its replica reported it): not from the constructor,
    // where the nodes it is wired to may not have started yet
    this.sendUnsent();
    if (gate && !gate.active) {
      await gate.catchUp(); // what it notified during a Redis outage, for the shared memory
      this.showStatus(this.lastStatus ?? { kind: 'pending', count: 0 });
      return rules.baseMs; // standby: the holder polls; a role change triggers a poll at once
    }
    this.heard = [];
    const requested = this.unpolled.requested();
    const fetched = await Promise.all(sources.map((source) => fetchErrors(client, source)));
    const heard = this.heard;
    this.heard = undefined;
    if (this.loop.stopped) return rules.baseMs; // closed meanwhile: the result belongs to nobody
    // frames during the request asked for a follow-up: not needed when this answer already shows what they said
    if (this.listening && heard && !followUpNeeded(heard, fetched, rules)) this.loop.dropFollowUp();
    // coordinated, a sweep due (a new holder): the firmware errors another replica raised join this memory, those
    // another reported resolved while this one was a standby leave it, first
    if (this.listening && gate && (await this.alignPushed())) this.save();
    if (this.loop.stopped) return rules.baseMs;
    // an error pushed without a source and resolved by a frame while this list was read is not raised from it again
    const results = this.listening && heard ? withoutResolvedMeanwhile(fetched, heard, watch, rules) : fetched;
    if (this.listening) adoptListed(watch, results, rules);
    const outcome = applyPoll(watch, this.memory, results, rules, this.sharedConnection());
    this.unpolled.applied(requested, results); // A's memory holds what the list showed: its ids no longer wait
    const answered = this.listening
      ? resolveAnswered(watch, (key, record) => answeredHere(client, key, record), rules)
      : undefined;
    if (outcome.changed || answered?.changed) this.save();
    // the list first, then each error's event: a state document made between two of those events (coordinated, each
    // waits for Redis) would show a step the instrument never was in, e.g. one error resolved, the next not yet raised.
    // The list has the open firmware errors (source A): the instrument never lists them, and they wait for an answer.
    // It is the instrument's whole list, whatever this watch's severity filter (which picks what it raises): two watches
    // of one source with different filters would each replace the other's list, the document flipping at every poll.
    // Each event after the list says so (`listed`): the document keeps the list's errors, whatever the events (an id
    // reused for an error of the same title resolves the old one after the list shows the new one; a new holder's
    // sweep raises again what an earlier one raised and the list no longer shows)
    const firmware = openFirmwareRecords(watch);
    const listedFirst = this.lab.pending(
      results.map((r) =>
        'records' in r
          ? { source: r.source, records: [...r.records, ...(r.source === 'A' ? firmware : [])] }
          : { source: r.source },
      ),
    );
    await this.emit(
      { raised: outcome.raised, resolved: [...outcome.resolved, ...(answered?.resolved ?? [])], changed: false },
      [],
      // the open firmware errors count as listed (source A): a sweep would resolve them, the instrument never lists them
      listedKeysOf(
        results.map((r) => ('records' in r && r.source === 'A' ? { ...r, records: [...r.records, ...firmware] } : r)),
        rules,
      ),
      listedFirst,
    );
    // a refused or failing login is the lh-server's to say (once); this node shows it in its status
    const serverSays =
      outcome.warn !== undefined &&
      (loginRefusalOf(this.client, outcome.warn) ||
        (outcome.status.kind === 'refused' && serverSaysIt(this.client, outcome.status.error)));
    if (outcome.warn && !serverSays) logWarn(this.node, outcome.warn);
    this.lastStatus = outcome.status;
    this.showStatus(outcome.status);
    this.catchUpConnection();
    return outcome.delayMs > rules.baseMs ? outcome.delayMs : this.slot.delayAfter(started); // back-off, else the next slot
  }

  /**
   * Coordinated, a sweep due: the firmware errors of this watch's memory in line with the shared memory (adoptPushed,
   * forgetResolvedElsewhere); a Redis failure leaves it to the sweep's next turn (the gate then passes msgs marked lost).
   */
  private async alignPushed(): Promise<boolean> {
    const shared = await this.gate?.beforeSweep().catch(() => undefined);
    if (!shared) return false;
    const forgot = forgetResolvedElsewhere(this.watch, shared.gone, this.rules);
    return adoptPushed(this.watch, shared.raised, this.rules) || forgot;
  }

  /**
   * One change's msgs after the msgs of the change before (a frame's are not awaited by the poll loop): a raised msg
   * waits up to 2 s for its photo, and coordinated every msg for a Redis round trip, so a firmware error's resolution
   * pushed meanwhile went out before its raised msg, or, coordinated, was refused by the shared memory that had not
   * yet taken the raise (no resolved msg at all).
   */
  private emit(...change: Parameters<ErrorWatch['emitNow']>): Promise<void> {
    const next = this.emitting.then(() => this.emitNow(...change));
    this.emitting = next.catch(() => undefined);
    return next;
  }

  private async emitNow(
    proposed: PushOutcome,
    connection: ReturnType<typeof connectionMessage>[] = [],
    listed?: ReturnType<typeof listedKeysOf<PolledError>>,
    listedFirst = false,
  ): Promise<void> {
    const { instrument, template, lab } = this;
    if (this.gate) {
      // coordinated: each msg goes out the moment the shared memory took it (see src/coordination/error-gate.ts); the
      // lab hears each at once too, marked `more` (a Redis round trip lies between two), and 'settled' at the end
      let told = false;
      const change = newChange();
      try {
        await this.gate.filter(proposed.raised, proposed.resolved, listed, (list, r, hold) => {
          told = true; // closing meanwhile: Redis took it as reported; the next instance sends it (deliver)
          // its claim is settled only once the msg is sent (after a photo, or by the next instance): a stop before
          // leaves it to the next holder, marked, not taken for sent
          const release = hold();
          if (list === 'raised') {
            const msg = markLost(this.raisedMessage(r.source as Source, r.record as PolledError, instrument, template), r);
            const photo = this.snapshots.attach([msg]); // asked now; the msgs after it wait for it (in order)
            const errors = this.unsentError('raised', r.source, r.record, listed !== undefined);
            this.sending = this.sending.then(() => photo).then(([m]) => this.deliver([m, null, null], errors, release));
            // a new holder sending again what an earlier one may have sent: lh-state's event msg says so too
            lab.raised(r.source as Source, r.record as PolledError, {
              redelivered: r.redelivered !== undefined,
              listed: listedFirst,
              more: true,
              change,
            });
          } else {
            const msg = markLost(resolvedMessage(r.source as Source, r.record, instrument), r);
            const errors = this.unsentError('resolved', r.source, r.record, listed !== undefined);
            this.sending = this.sending.then(() => this.deliver([null, msg, null], errors, release));
            lab.resolved(r.source as Source, r.record as PolledError, { listed: listedFirst, more: true, change });
          }
        });
      } finally {
        if (told) lab.settled(change);
      }
      if (connection.length > 0) this.deliver([null, null, connection]);
      return;
    }
    // the memory took them as reported: a close during the photo's wait hands them to the next instance (deliver)
    const raised = await this.snapshots.attach(
      proposed.raised.map((r) => this.raisedMessage(r.source, r.record, instrument, template)),
    );
    const resolved = proposed.resolved.map((r) => resolvedMessage(r.source, r.record, instrument));
    if (raised.length > 0 || resolved.length > 0 || connection.length > 0) {
      const polled = listed !== undefined; // a frame's errors: a pushed firmware error, or none saved
      const errors = [
        ...proposed.raised.flatMap((r) => this.unsentError('raised', r.source, r.record, polled)),
        ...proposed.resolved.flatMap((r) => this.unsentError('resolved', r.source, r.record, polled)),
      ];
      this.deliver([raised, resolved, connection], errors);
    }
    // resolved first, as the gate passes them: an id reused for an error of the same title is one error gone, then
    // a new one raised (the metrics count a raise once while its error is pending); the document after the last
    const change = newChange();
    const events = [
      ...proposed.resolved.map((r) => (more: boolean) => lab.resolved(r.source, r.record, { listed: listedFirst, more, change })),
      ...proposed.raised.map((r) => (more: boolean) => lab.raised(r.source, r.record, { listed: listedFirst, more, change })),
    ];
    events.forEach((tell, i) => tell(i < events.length - 1));
  }

  /**
   * The msg of a raised error (never throws: a Notification template that cannot be rendered gives the default one); the
   * template's refusal naming the setting goes to Catch nodes with the first such msg of this deploy.
   */
  private raisedMessage(...args: Parameters<typeof raisedMessage>): ReturnType<typeof raisedMessage> {
    const msg = raisedMessage(...args);
    const refusal = this.templateRefusal;
    if (refusal) {
      this.templateRefusal = undefined;
      this.node.error(refusal, msg); // Node-RED gives Catch nodes a copy of the msg, this one goes on
    }
    return msg;
  }

  /** A poll now (an input msg), or at once after the one in flight. */
  trigger(): void {
    this.loop.trigger();
  }

  // ---- pushes

  /**
   * A frame on instincterrors: firmware errors raised or resolved from it at once (each error of a frame that lists
   * several), and a poll at once for the rest (none when the frame settled all it said: settledByFrame). The errors of
   * one frame go out as one change (one photo wait, one save, one status): every error's first msg in the first
   * change, and where a list holds more of one error (its raise, then its resolution) each next one in the change
   * after, so that each error's msgs keep the frame's order (a change's msgs go out after the change before;
   * coordinated, the shared memory takes them in that order too).
   */
  private onFrame(event: InstrumentEvent): void {
    if (this.loop.stopped || (this.gate && !this.gate.active)) return;
    let photo = false;
    let poll = false;
    const changes: PushOutcome[] = [];
    /** the change that holds an error's last msg so far, by its key */
    const last = new Map<string, number>();
    for (const frame of firmwareErrorsFromFrame(event)) {
      const { outcome, photo: ahead, poll: asks } = this.onErrorFrame(frame, event.code);
      photo = ahead || photo;
      poll = asks || poll;
      if (!outcome.changed) continue;
      const keys = [...outcome.raised, ...outcome.resolved]
        .map((r) => this.rules.keyOf(r.source, r.record))
        .filter((key): key is string => key !== undefined);
      const at = Math.max(0, ...keys.map((key) => (last.get(key) ?? -1) + 1));
      const change = (changes[at] ??= { raised: [], resolved: [], changed: true });
      change.raised.push(...outcome.raised);
      change.resolved.push(...outcome.resolved);
      for (const key of keys) last.set(key, at);
    }
    if (changes.length > 0) {
      this.saveSoon();
      for (const change of changes)
        this.emit(change).catch((err: unknown) => logWarn(this.node, asLhError(err, this.node.type).message));
      const { watch } = this;
      this.showStatus(this.lastStatus ?? { kind: 'pending', count: watch.sources.A.size + watch.sources.B.size });
    }
    // at once, or folded into the one follow-up of the poll in flight (a flood costs two at a time); none for a frame
    // that only raised or resolved firmware errors it names (settledByFrame: a poll could find nothing of them), unless
    // the last poll went unanswered: the frame is the first sign that the instrument is back (online at once)
    if (poll || this.lastStatus?.kind === 'unreachable') this.livePolls.frame();
    // a listed error pushed: its deck photo starts beside its poll (not after the poll's answer), if there is room;
    // on the turn after the poll's (asked for on this one), so that the poll's request goes out first: the
    // instrument answers the poll before it draws the picture (one server: the camera's answer takes longer). What
    // this turn checked holds on that one too: the node still open and, coordinated, still the holder (a lease gone
    // meanwhile leaves the photo to the new holder, which takes its own: one for nobody would hold a photo permit)
    if (photo)
      setImmediate(() => {
        if (!this.loop.stopped && !(this.gate && !this.gate.active)) this.snapshots.ahead();
      });
  }

  /**
   * One error of a frame applied to the memory: what it changed, whether it asks for a poll (and then counts among the
   * frames heard during a poll in flight) and whether for the deck photo ahead of that poll.
   */
  private onErrorFrame(frame: ErrorFrame, code: string): { outcome: PushOutcome; photo: boolean; poll: boolean } {
    const { watch } = this;
    const poll = !settledByFrame(watch, frame, this.rules, this.unpolled);
    if (poll) this.unpolled.asked(frame, this.rules);
    if (poll && this.heard && this.heard.length < MAX_HEARD_FRAMES) this.heard.push(frame);
    else if (poll && this.heard) this.heard[MAX_HEARD_FRAMES - 1] = { kind: 'unrecognised', reason: 'too many frames to tell' };
    const outcome = applyErrorFrame(watch, frame, this.rules);
    const photo = photoAhead(watch, frame, this.rules);
    if (frame.kind === 'unrecognised' && frame.leftOut !== undefined) {
      // errors of a list beyond the cap are not raised: said once whatever other frame was said before
      const leftOut = frame.leftOut;
      this.warnOnce(saidLeftOut, () =>
        this.RED._('lh-error-poll.log.frameLeftOut', { count: leftOut, max: MAX_ERRORS_PER_FRAME }),
      );
    } else if (frame.kind === 'unrecognised' && frame.reason !== EMPTY_LIST_REASON) {
      // an error in a shape this package does not know would be dropped silently: said once, with why
      const reason = frame.reason;
      this.warnOnce(saidNotRead, () =>
        this.RED._('lh-error-poll.log.frameNotRead', { reason, code: oneLine(code).slice(0, 64) }),
      );
    }
    if (outcome.dropped)
      this.warnOnce(saidDropped, () => this.RED._('lh-error-poll.log.firmwareDropped', { max: MAX_OPEN_FIRMWARE }));
    return { outcome, photo, poll };
  }

  /** Logs a warning once per instrument memory for `said` (the text made only when it is said). */
  private warnOnce(said: WeakSet<WatchState>, text: () => string): void {
    if (said.has(this.watch)) return;
    said.add(this.watch);
    logWarn(this.node, text());
  }

  private onSocket(change: EventStateChange): void {
    if (change.channel !== 'errors' || this.loop.stopped) return;
    const { watch, node } = this;
    const reaction = reactToSocket(this.socket, change.state, openFirmwareErrors(watch), saidUnavailable.has(watch));
    this.socket = reaction.state;
    if (reaction.logUnavailable) {
      saidUnavailable.add(watch);
      logInfo(node, this.RED._('lh-error-poll.log.unavailable', { reason: change.reason ?? '' }));
    }
    if (reaction.openAfterOutage > 0)
      logWarn(node, this.RED._('lh-error-poll.log.openAfterOutage', { count: reaction.openAfterOutage }));
    // at once, never held back: what happened while the socket was down is found now (the socket's back-off bounds it)
    if (reaction.pollNow && reaction.paced)
      this.slot.catchUp((since) => this.loop.catchUp(since)); // a deploy spreads
    else if (reaction.pollNow) this.livePolls.connected();
    if (this.lastStatus) this.showStatus(this.lastStatus);
  }

  /** Listens to instincterrors (opening the socket, shared with every node of the instrument) until the node closes. */
  private listen(): void {
    const { client, watch } = this;
    this.offListening = [
      client.events.onState((change) => this.onSocket(change)),
      client.events.onErrors((event) => this.onFrame(event)),
      // the answer page and lh-answer-error find open firmware errors here: the instrument never lists them
      offerFirmwareErrors(this.server.instrumentKey, (id) => openFirmwareRecord(watch, id)),
    ];
    const current = client.events.lastChange('errors'); // another node may hold the socket open already
    if (current) this.onSocket(current);
  }

  // ---- connection and status

  /**
   * The server's view of this node's sources: how many requests in a row went unanswered. The node backs off from its
   * own Offline after on (when it says offline), as it would alone: a lower value on another node does not slow it.
   */
  private sharedConnection(): { failures: number; offlineAfter: number } {
    const view = this.server.connection?.view(this.sources);
    const failures = view?.state === 'offline' || view?.state === 'online' ? view.failures : 0;
    return { failures, offlineAfter: this.rules.offlineAfter };
  }

  /** After a poll: what changed while this node was not deployed (or a standby) is said now, once. */
  private catchUpConnection(): void {
    const connection = this.server.connection;
    if (connection) this.onConnection(connection.view(this.sources, this.rules.offlineAfter));
  }

  /** The server's connection state changed: offline or online once per change on output 3 (the status shows it). */
  private onConnection(view: ConnectionView): void {
    if (this.loop.stopped || (this.gate && !this.gate.active)) return; // a standby's holder reports it
    const { watch, sources } = this;
    const { reported, change } = connectionChange(watch.connection, view);
    watch.connection = reported;
    // the lab hears the state after every poll, not only a change reported as a msg: an instrument online from the
    // start (or after a lease came back) is online in the state document, not unknown (the document folds repeats)
    if (view.state === 'offline' || (view.state === 'online' && view.failures === 0))
      this.lab.connection(view.state, view.state === 'offline' ? view.reason : undefined);
    if (!change) return;
    const interfaces = change.interfaces?.filter((api): api is Source => sources.includes(api as Source));
    const details = {
      failedPolls: change.failedPolls,
      reason: change.reason,
      interfaces: change.state === 'offline' ? interfaces : undefined,
    };
    // watching without Redis (coordination lost): every replica says it, marked
    const mark = this.gate && coordinationStatus(this.server.coordination) ? { coordination: 'lost' } : {};
    this.deliver([null, null, { ...connectionMessage(change.state, this.instrument, details), ...mark }]);
  }

  private showStatus(polled: StatusDecision): void {
    const { status } = this;
    const coordinated = coordinationStatus(this.server.coordination);
    // a standby names who watches, above the connection state (the holder shows and reports that)
    status.standby(this.gate && !this.gate.active ? coordinated : undefined);
    if (coordinated) return status.other(coordinated);
    const decision = this.listening ? withFirmwareErrors(polled, this.watch) : polled;
    switch (decision.kind) {
      case 'refused': // a refused login is not "offline": the session holds further logins back, the poll only backs off
        return status.failed(decision.error);
      case 'unreachable':
        return status.unanswered(decision.error);
      case 'pending': {
        const key = this.socket === 'connected' && this.listening ? 'lh-error-poll.status.pendingLive' : 'pending';
        return decision.count > 0 ? status.warn(key, { count: decision.count }) : status.ok(key, { count: decision.count });
      }
    }
  }
}
