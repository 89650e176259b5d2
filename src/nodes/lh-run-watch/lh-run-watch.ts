import { asLhError, isUnreachable, type LhError, type LiquidHandlerClient, type RunStatus } from '../../client';
import {
  commitMemory,
  draftMemory,
  durationOf,
  type FinishedRun,
  matchRecord,
  observe,
  progressDue,
  progressOf,
  resultOf,
  stillGoingOn,
  type TrackedRun,
  triggersPoll,
} from '../runs/run-decisions';
import { type RunMemoryStore, runMemoryStore } from '../runs/run-memory-store';
import { connectionChange, type ConnectionView, offlineAfterOf } from '../shared/connection-state';
import { connectionMessage } from '../shared/error-messages';
import { type InstrumentInfo, instrumentInfo } from '../shared/error-records';
import { LabPublisher, stepName } from '../shared/lab-publish';
import { LivePolls } from '../shared/live-polls';
import { migrateConfig } from '../shared/migrations';
import { logInfo, logWarn, serverSaysIt } from '../shared/node-log';
import { asNode, type Node, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { backoffMs, intervalMs, PollLoop, withJitter } from '../shared/poll-loop';
import { pollPermits } from '../shared/poll-permits';
import { pollSchedule, type PollSlot } from '../shared/poll-schedule';
import { type LhServerNode, requireClient } from '../shared/server-node';
import { Status } from '../shared/status';
import { forgetMemory, memoryFor, memoryKey, type UnsentReport, type WatchMemory } from './run-memory';

const DEFAULT_PROGRESS_S = 5;

/** Seconds between progress messages; 0 = every poll. */
function progressEveryMs(value: unknown): number {
  const n = Number(value);
  return value === '' || value === undefined || value === null || !Number.isFinite(n) || n < 0
    ? DEFAULT_PROGRESS_S * 1000
    : n * 1000;
}

/** "Listen for pushes": on unless switched off (configs saved before the option existed listen too). */
function listensForPushes(value: unknown): boolean {
  return value !== false && value !== 'false';
}

/**
 * Polls at once when the instrument pushes a run status or a finished run, and when the event socket (re)connects
 * (a change made while it was down is caught up). Returns the function that removes both subscriptions.
 */
function listenForPushes(RED: Red, node: Node, client: LiquidHandlerClient, loop: PollLoop, slot: PollSlot): () => void {
  let saidUnavailable = false;
  let connectedBefore = false;
  // a reconnect polls at once; pushes at once or folded into one follow-up, within a budget (a flood costs two at a time)
  const livePolls = new LivePolls(loop);
  const offEvents = client.events.onEvents((event) => {
    if (triggersPoll(event.code)) livePolls.frame();
  });
  const offState = client.events.onState((change) => {
    if (change.channel !== 'events') return;
    if (change.state === 'connected') {
      saidUnavailable = false;
      // a reconnect polls at once (a change made while the socket was down); the first connect goes with the deploy's
      // paced first polls, so a deploy of many nodes does not poll in one burst
      if (connectedBefore) livePolls.connected();
      else slot.catchUp((since) => loop.catchUp(since));
      connectedBefore = true;
    } else if (change.state === 'unavailable' && !saidUnavailable) {
      saidUnavailable = true;
      logInfo(node, RED._('lh-run-watch.log.noPushes', { reason: change.reason ?? '' }));
    }
  });
  return () => {
    offEvents();
    offState();
    livePolls.stop();
  };
}

/** The ids of the run records listed when a run is first seen (none is its record); null when they cannot be read. */
/**
 * The ids of the run records listed at `run`'s first sight (none is its own; null when the list could not be read),
 * and whether that is unsure: the status read after the list no longer shows the run going on, so it may have ended,
 * and left its record, between the poll and the list (a run first seen in its last moments).
 */
async function priorRecords(
  client: LiquidHandlerClient,
  run: TrackedRun,
): Promise<Pick<TrackedRun, 'priorRecordIds' | 'priorRecordsUnsure'>> {
  let ids: string[];
  try {
    ids = (await client.runs.listRunData()).map((r) => r.id);
  } catch {
    return { priorRecordIds: null };
  }
  const going = await client.runs.status().then(
    (status) => stillGoingOn(run, status),
    () => false,
  );
  return going ? { priorRecordIds: ids } : { priorRecordIds: ids, priorRecordsUnsure: true };
}

/** Output 2's msg: the result from the run record when the instrument lists one, else from the states seen. */
async function finishedMessage(client: LiquidHandlerClient, f: FinishedRun, instrument: InstrumentInfo): Promise<NodeMessage> {
  let record: Record<string, unknown> | undefined;
  try {
    record = matchRecord(await client.runs.listRunData(), f.run);
  } catch {
    record = undefined; // the record is a bonus: the run's end is reported anyway
  }
  const { result, resultText } = resultOf(record, f.run.states);
  const duration = durationOf(f.run, f.endedAt);
  return {
    topic: 'finished',
    result,
    resultText,
    duration,
    protocolId: f.run.protocolId,
    protocolName: f.run.protocolName,
    runId: record ? String(record.id) : undefined,
    payload: {
      result,
      resultText,
      duration,
      protocolId: f.run.protocolId,
      protocolName: f.run.protocolName,
      startTime: f.run.startTime,
      endTime: new Date(f.endedAt).toISOString(),
      states: f.run.states,
      runRecord: record ?? null,
    },
    instrument,
  };
}

export = function register(RED: Red): void {
  function LhRunWatch(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node: Node = asNode(this);
    const status = new Status(node, RED);
    let loop: PollLoop | undefined;
    let key: string | undefined;
    let instrumentKey: string | undefined;
    let setupError: LhError | undefined;
    let stopListening: (() => void) | undefined;
    let slot: PollSlot | undefined;
    let offRole: (() => void) | undefined;
    try {
      const { server, client } = requireClient(RED, config.server, node.type);
      instrumentKey = server.instrumentKey;
      key = memoryKey(instrumentKey, node.id);
      // this node's slot among every poll loop of this Node-RED with the same interval: a fleet polls spread
      slot = pollSchedule.join(key, intervalMs(config.interval));
      // alone: in-process memory; coordinated (lh-coordination): only the lease holder watches, its memory in Redis
      const memory = memoryFor(instrumentKey, node.id);
      const store = runMemoryStore(server, node.id, memory, (text) => logWarn(node, text));
      loop = new RunWatch(node, status, server, client, memory, store, instrumentInfo(server, client), config, slot).loop;
      const started = loop;
      offRole = store.onChange(() => started.trigger()); // a new holder polls at once
      if (listensForPushes(config.listen)) stopListening = listenForPushes(RED, node, client, loop, slot);
    } catch (err) {
      setupError = asLhError(err, node.type);
      status.failed(setupError);
      node.error(setupError.message);
    }

    node.on('input', (_msg: NodeMessage, _send: unknown, done: (err?: Error) => void) => {
      if (!loop) return done(setupError);
      loop.trigger();
      done();
    });

    node.on('close', (removed: boolean, done: () => void) => {
      stopListening?.();
      offRole?.();
      loop?.stop();
      slot?.leave();
      if (removed && instrumentKey !== undefined) forgetMemory(instrumentKey, node.id);
      done();
    });
  }
  RED.nodes.registerType('lh-run-watch', LhRunWatch);
};

/**
 * The msgs of a poll: the state msg when the run state changed (output 1), the progress msg when it changed or one
 * is due (output 3).
 */
function pollMessages(
  s: RunStatus,
  seen: ReturnType<typeof observe>,
  p: ReturnType<typeof progressOf>,
  due: boolean,
  instrument: InstrumentInfo,
): { change: NodeMessage | null; progress: NodeMessage | null } {
  const change = seen.change
    ? { topic: 'state', state: seen.change.state, previousState: seen.change.previousState, payload: s, instrument }
    : null;
  const progress =
    p && (seen.change || due)
      ? {
          topic: 'progress',
          progress: p.progress,
          eta: p.eta,
          remainingMs: p.remainingMs,
          state: s.protocolRunState,
          payload: s,
          instrument,
        }
      : null;
  return { change, progress };
}

/** The node's status after a poll: the run state, with its progress while it has one. */
function show(status: Status, store: RunMemoryStore, s: RunStatus, now: number): void {
  const lost = store.status(); // watching without Redis: the status says so (what it sends is marked)
  if (lost) return status.other(lost);
  const p = progressOf(s, now);
  const subs = { state: s.protocolRunState, percent: p ? Math.round(p.progress * 100) : 0 };
  if (s.protocolRunState === 'Idle') status.idle('lh-run-watch.status.state', subs);
  else if (s.protocolRunState === 'ErrorHandling')
    status.warn(p ? 'lh-run-watch.status.progress' : 'lh-run-watch.status.state', subs);
  else status.ok(p ? 'lh-run-watch.status.progress' : 'lh-run-watch.status.state', subs);
}

/**
 * One run watch at work: polls the run status (a lease holder alone when coordinated), reports each change once on
 * outputs 1–3, the connection's changes on output 4, and tells the lab (lh-state, the metrics) what it saw.
 */
class RunWatch {
  /** at most MAX_POLLS_IN_FLIGHT polls of this Node-RED at a time */
  readonly loop: PollLoop;
  private readonly baseMs: number;
  private readonly grace: number;
  private readonly everyMs: number;
  /** lh-state and the metrics read what this watch sees */
  private readonly lab: LabPublisher;
  private lastProblem = '';

  constructor(
    private readonly node: Node,
    private readonly status: Status,
    private readonly server: LhServerNode,
    private readonly client: LiquidHandlerClient,
    private readonly memory: WatchMemory,
    private readonly store: RunMemoryStore,
    private readonly instrument: InstrumentInfo,
    config: NodeConfig,
    private readonly slot: PollSlot,
  ) {
    this.baseMs = slot.intervalMs;
    this.grace = offlineAfterOf(config.offlineAfter);
    this.everyMs = progressEveryMs(config.progressInterval);
    this.lab = new LabPublisher(server, instrument);
    this.loop = new PollLoop((started) => this.pollOnce(started), pollPermits);
    status.idle('polling');
    status.follow(server.connection, { apis: ['A'], offlineAfter: this.grace, onChange: (v) => this.onConnection(v) });
    slot.catchUp((since) => this.loop.catchUp(since)); // the first poll: a deploy of many nodes paces its first polls
  }

  /** A poll's msgs and what the lab hears of them. */
  private sendReport(report: UnsentReport): void {
    for (const out of report.sends) this.node.send(out);
    if (report.finished !== undefined && report.finishedFirst) this.lab.runFinished(report.finished);
    if (report.run) this.lab.run(report.run);
    if (report.finished !== undefined && !report.finishedFirst) this.lab.runFinished(report.finished);
  }

  /**
   * What the node's closed instance recorded as reported and could not send: sent before anything this instance
   * sends, whatever the role now (no other replica sends it: the shared memory says it was).
   */
  private sendUnsent(): void {
    const unsent = this.memory.unsent ?? [];
    this.memory.unsent = undefined;
    for (const report of unsent) this.sendReport(report);
  }

  private async pollOnce(started: number): Promise<number> {
    const { baseMs, client, store, memory, loop, instrument } = this;
    this.sendUnsent();
    if (!store.active) {
      this.status.standby(store.status()); // above the connection state: the holder shows and reports that
      return baseMs; // another replica watches; a role change triggers a poll at once
    }
    this.status.standby(undefined);
    let s: RunStatus;
    try {
      s = await client.runs.status();
    } catch (err) {
      return loop.stopped ? baseMs : this.failedPoll(err);
    }
    if (loop.stopped) return baseMs; // closed meanwhile: the answer belongs to nobody
    this.lastProblem = '';
    this.catchUpConnection();

    await store.load(memory); // coordinated: a new holder continues from the shared memory
    if (loop.stopped) return baseMs;
    const now = Date.now();
    // decided on a draft, written into the memory only as its msgs go out: a node closed (redeployed) while this
    // poll reads the finished run's record leaves the memory as it was, and the redeployed node reports the run
    const draft = draftMemory(memory);
    const before = draft.run;
    const seen = observe(draft, s, now);
    const runBegan = draft.run !== undefined && draft.run !== before;
    const p = progressOf(s, now);
    const due = !!p && !seen.change && progressDue(draft, now, this.everyMs);
    const { change, progress } = pollMessages(s, seen, p, due, instrument);
    if (seen.change && p) draft.progressAt = now;
    // the finished msg (its run record read from the instrument) is ready before the memory is recorded: a holder
    // that dies while it reads has recorded nothing and the next one reports the run; recorded, it is sent at once
    const finished = seen.finished ? await finishedMessage(client, seen.finished, instrument) : undefined;
    if (loop.stopped) return baseMs;
    // recorded before it is sent: a paused old holder sends nothing; without Redis it goes out marked
    const verdict = await store.save(draft);
    if (verdict === 'fenced') return baseMs;
    commitMemory(memory, draft);
    const report = reportOf(s, { change, progress, finished }, p, runBegan, verdict === 'lost');
    // no change: the lab still hears the run read now (a state node deployed since, or the lab's state redeployed,
    // would otherwise say no run until the next change; the document folds repeats). Its progress stays as told.
    const current = { state: s.protocolRunState, protocol: s.protocolName ?? null, step: stepName(s.currentStep) };
    // closed while the memory was written (a redeploy): it is recorded as reported (coordinated: in Redis, where the
    // next instance reads it), so the next instance of this node sends it; dropped, it would never be reported
    if (loop.stopped) {
      // after what an earlier instance left unsent (two redeploys in a row, neither instance polled since)
      if (report.sends.length > 0) memory.unsent = [...(memory.unsent ?? []), report];
      return baseMs;
    }
    // left by the closed instance while this poll ran (its write answered after this poll began): it comes first
    this.sendUnsent();
    this.sendReport(report);
    if (!report.run) this.lab.run(current);
    const run = memory.run;
    if (run && run.priorRecordIds === undefined) {
      Object.assign(run, await priorRecords(client, run));
      await store.save(memory);
    }
    show(this.status, store, s, now);
    return this.slot.delayAfter(started); // the next slot: never more than an interval after this poll
  }

  /** A poll the instrument did not answer: the status says why, and the next one backs off. */
  private failedPoll(err: unknown): number {
    this.catchUpConnection();
    const e = asLhError(err, 'run-status');
    if (!isUnreachable(e)) {
      // a refused or failing login is the lh-server's to say (once); this node shows it in its status
      if (e.message !== this.lastProblem && !serverSaysIt(this.client, e)) logWarn(this.node, e.message);
      this.lastProblem = e.message;
      this.status.failed(e);
      return withJitter(backoffMs(this.baseMs, 1, 0));
    }
    // offline is the lh-server's state (every request of the instrument feeds it): it shows and emits it
    this.status.unanswered(e);
    const view = this.server.connection?.view(['A']);
    const failures = view?.state === 'offline' || view?.state === 'online' ? view.failures : 1;
    return withJitter(backoffMs(this.baseMs, failures, this.grace)); // from its own Offline after on, as alone
  }

  /** After a poll: what changed while this node was not deployed is said now, once. */
  private catchUpConnection(): void {
    const connection = this.server.connection;
    if (connection) this.onConnection(connection.view(['A'], this.grace));
  }

  /** The server's connection state changed: offline or online once per change on output 4 (the status shows it). */
  private onConnection(view: ConnectionView): void {
    if (this.loop.stopped || !this.store.active) return; // a standby's holder reports it
    const { reported, change } = connectionChange(this.memory.connection, view);
    this.memory.connection = reported;
    if (!change) return;
    const details = { failedPolls: change.failedPolls, reason: change.state === 'offline' ? change.reason : undefined };
    const mark = this.store.status() ? { coordination: 'lost' } : {}; // watching without Redis: every replica says it
    this.node.send([null, null, null, { ...connectionMessage(change.state, this.instrument, details), ...mark }]);
  }
}

/**
 * What a poll sends (outputs 1–3; marked `coordination: "lost"` when it was recorded without Redis) and what the lab
 * (lh-state, the metrics) hears with it: the run's state and progress, the finished run's result.
 */
function reportOf(
  s: RunStatus,
  msgs: { change: NodeMessage | null; progress: NodeMessage | null; finished: NodeMessage | undefined },
  p: ReturnType<typeof progressOf>,
  runBegan: boolean,
  lost: boolean,
): UnsentReport {
  const { change, progress, finished } = msgs;
  const mark = lost ? { coordination: 'lost' } : {};
  const report: UnsentReport = { sends: [] };
  const finishedMsg: (NodeMessage | null)[] | undefined = finished && [null, { ...finished, ...mark }, null, null];
  // a run replaced by the next one between two polls (the poll shows a run, not Idle): its end goes out before the
  // next run's state, so a reader of both outputs (lh-error-policy's run scope) ends the one before it begins the other
  const replacedRun = finishedMsg !== undefined && s.protocolRunState !== 'Idle';
  if (replacedRun) report.sends.push(finishedMsg);
  if (change || progress) {
    report.sends.push([change && { ...change, ...mark }, null, progress && { ...progress, ...mark }, null]);
    report.run = {
      state: s.protocolRunState,
      started: runBegan,
      protocol: s.protocolName ?? null,
      step: stepName(s.currentStep),
      progress: p ? p.progress : null,
      eta: p ? (p.eta ?? null) : null,
    };
  }
  if (finished && finishedMsg) {
    if (!replacedRun) report.sends.push(finishedMsg);
    report.finished = String(finished.result ?? 'unknown');
    if (replacedRun) report.finishedFirst = true;
  }
  return report;
}
