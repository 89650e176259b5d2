import {
  asLhError,
  EventStateChange,
  firmwareErrorFromFrame,
  identityOf,
  InstrumentEvent,
  LhError,
  LiquidHandlerClient,
} from '../../client';
import { offerFirmwareErrors } from '../answering/open-firmware-errors';
import { severityFilter } from '../answering/severity';
import { snapshotHook, snapshotTaker } from '../deck/snapshot';
import { Api, connectionChange, ConnectionView } from '../shared/connection-state';
import { coordinationStatus, gateFor, listedKeysOf, markLost } from '../shared/coordinated-poll';
import { connectionMessage, errorKey, raisedMessage, resolvedMessage } from '../shared/error-messages';
import { InstrumentInfo, instrumentInfo } from '../shared/error-records';
import { LabPublisher } from '../shared/lab-publish';
import { LivePolls } from '../shared/live-polls';
import { migrateConfig } from '../shared/migrations';
import { logError, logInfo, logWarn } from '../shared/node-log';
import { asNode, Node, NodeConfig, NodeMessage, Red } from '../shared/node-red';
import { onPasswordWarning, passwordExpiryMessage } from '../shared/password-warning';
import { intervalMs, PollLoop } from '../shared/poll-loop';
import { PolledError } from '../shared/poll-messages';
import { pollPermits } from '../shared/poll-permits';
import { pollSchedule } from '../shared/poll-schedule';
import { LhServerNode, requireClient } from '../shared/server-node';
import { Status } from '../shared/status';
import { isChecked } from '../shared/typed-inputs';
import {
  applyPoll,
  newPollMemory,
  offlineAfterOf,
  pendingOnly,
  PollRules,
  SourceResult,
  sourcesOf,
  StatusDecision,
} from './poll-decisions';
import {
  adoptListed,
  applyErrorFrame,
  listenOf,
  MAX_OPEN_FIRMWARE,
  openFirmwareErrors,
  openFirmwareRecord,
  openFirmwareRecords,
  PushOutcome,
  reactToSocket,
  resolveAnswered,
  SocketState,
  withFirmwareErrors,
} from './push-decisions';
import { forgetWatch, readSavedWatch, savedWatch, Source, watchFor, watchKey, WatchState } from './seen-errors';
import { seenFileStore } from './seen-file';

const CONTEXT_KEY = 'lhErrorPoll';
/** Watches (instrument and node, across redeploys) whose log already said the instrument has no errors socket. */
const saidUnavailable = new WeakSet<WatchState>();
/** Watches whose log already said that open firmware errors beyond the cap were forgotten. */
const saidDropped = new WeakSet<WatchState>();
/** Saves after pushed frames wait this long, folding a flood of frames into one write of the context store. */
const FRAME_SAVE_DELAY_MS = 1000;

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

interface Watcher {
  node: Node;
  status: Status;
  client: LiquidHandlerClient;
  server: LhServerNode;
  instrument: InstrumentInfo;
  watch: WatchState;
  sources: Source[];
  config: NodeConfig;
}

export = function register(RED: Red): void {
  function LhErrorPoll(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    const status = new Status(node, RED);
    const sources = sourcesOf(config.source);

    let setupError: LhError | undefined;
    let watcher: Watcher | undefined;
    try {
      const { server, client } = requireClient(RED, config.server, node.type);
      if (sources.includes('B') && !client.hasInstrumentInterface) {
        throw new LhError(RED._('lh-error-poll.errors.noInstrumentUrl'), {
          kind: 'config',
          operation: node.type,
          field: 'source',
        });
      }
      const watch = watchFor(watchKey(server.instrumentKey, node.id));
      watcher = { node, status, client, server, instrument: instrumentInfo(server, client), watch, sources, config };
    } catch (err) {
      setupError = asLhError(err, node.type);
      status.failed(setupError);
      logError(node, setupError.message);
    }

    const loop = watcher ? startWatching(RED, watcher) : undefined;

    node.on('input', (_msg: NodeMessage, _send: unknown, done: (err?: Error) => void) => {
      if (!loop) return done(setupError);
      loop.trigger();
      done();
    });

    node.on('close', (removed: boolean, done: () => void) => {
      loop?.stop();
      if (removed && watcher) forgetWatch(watchKey(watcher.server.instrumentKey, node.id));
      done();
    });
  }

  RED.nodes.registerType('lh-error-poll', LhErrorPoll);
};

function startWatching(RED: Red, w: Watcher): PollLoop {
  const { node, status, client, watch, sources, config, instrument } = w;
  const wanted = severityFilter(config.minSeverity);
  const rules: PollRules<PolledError> = {
    baseMs: intervalMs(config.interval),
    offlineAfter: offlineAfterOf(config.offlineAfter),
    keyOf: errorKey,
    wanted: (record) => wanted(record.severity),
  };
  const template = typeof config.template === 'string' ? config.template : '';
  const persist = isChecked(config.persist);
  const store = typeof config.store === 'string' && config.store.trim() !== '' ? config.store.trim() : undefined;
  // Remember without a chosen context store: a file in the user directory (the default context store is memory, emptied
  // on every stop); without a user directory (an embedded runtime), the default context store as before
  const userDir = typeof RED.settings.userDir === 'string' ? RED.settings.userDir : '';
  const memoryFile = persist && !store && userDir !== '' ? seenFileStore(userDir, node.id) : undefined;
  if (memoryFile) {
    node.on('close', (removed: boolean, done: () => void) => {
      // a node deleted from the flows forgets; a redeploy or a stop keeps the file
      // (after the saves queued so far; a save on close is dropped)
      if (removed) memoryFile.remove().then(done, done);
      else done();
    });
  }
  const writeMemory = (value: unknown, callback: (err: Error | undefined) => void): void =>
    memoryFile ? memoryFile.set(value, callback) : node.context().set(CONTEXT_KEY, value, store, callback);
  const readMemory = (callback: (err: Error | undefined, value: unknown) => void): void =>
    memoryFile ? memoryFile.get(callback) : node.context().get(CONTEXT_KEY, store, callback);
  const memory = newPollMemory();
  // a deck photo with each raised error (issue 33): waits at most 2 s, never stops the msg (src/nodes/deck/snapshot.ts)
  const snapshots = snapshotHook(isChecked(config.snapshot) ? snapshotTaker(client) : undefined, (t) => logWarn(node, t));
  const lab = new LabPublisher(w.server, instrument); // lh-state and the metrics read what this watch sees
  const loop = new PollLoop(pollOnce, pollPermits); // at most MAX_POLLS_IN_FLIGHT polls of this Node-RED at a time
  // this node's slot among every poll loop of this Node-RED with the same interval: a fleet polls spread, not together
  const slot = pollSchedule.join(watchKey(w.server.instrumentKey, node.id), rules.baseMs);
  node.on('close', () => slot.leave());
  const listening = listenOf(config.listen) && sources.includes('A');
  let socket: SocketState = 'connecting';
  const livePolls = new LivePolls(loop); // a reconnect polls at once; pushes at once or folded, within a budget
  let lastStatus: StatusDecision | undefined;
  // several Node-REDs (lh-coordination): only the lease holder polls and emits, each error once across replicas
  const gate = gateFor(w.server, node.id, rules);
  if (gate && w.server.coordination) {
    const off = w.server.coordination.onChange(() => {
      if (!gate.active) showStatus(lastStatus ?? { kind: 'pending', count: 0 });
      loop.trigger();
    });
    node.on('close', off);
  }

  let saveTimer: NodeJS.Timeout | undefined;
  /** A save after a pushed frame: one write for all frames within FRAME_SAVE_DELAY_MS (a poll's save takes it over). */
  function saveSoon(): void {
    if (!persist || saveTimer) return;
    saveTimer = setTimeout(() => {
      saveTimer = undefined;
      save();
    }, FRAME_SAVE_DELAY_MS);
  }

  function save(): void {
    clearTimeout(saveTimer);
    saveTimer = undefined;
    if (!persist) return;
    writeMemory(savedWatch(watch, w.server.instrumentKey), (err) => {
      if (err) node.warn(RED._('lh-error-poll.errors.persist', { message: err.message }));
    });
  }

  async function pollOnce(started: number): Promise<number> {
    if (gate && !gate.active) {
      await gate.catchUp(); // what it notified during a Redis outage, for the shared memory
      showStatus(lastStatus ?? { kind: 'pending', count: 0 });
      return rules.baseMs; // standby: the holder polls; a role change triggers a poll at once
    }
    const results = await Promise.all(sources.map((source) => fetchErrors(client, source)));
    if (loop.stopped) return rules.baseMs; // closed meanwhile: the result belongs to nobody
    if (listening) adoptListed(watch, results, rules);
    const outcome = applyPoll(watch, memory, results, rules, sharedConnection());
    const answered = listening ? resolveAnswered(watch, (key, record) => answeredHere(client, key, record), rules) : undefined;
    if (outcome.changed || answered?.changed) save();
    await emit(
      { raised: outcome.raised, resolved: [...outcome.resolved, ...(answered?.resolved ?? [])], changed: false },
      [],
      listedKeysOf(results, rules),
    );
    if (outcome.warn) logWarn(node, outcome.warn);
    // with the open firmware errors (source A): the instrument never lists them, and they still wait for an answer
    const firmware = openFirmwareRecords(watch);
    lab.pending(
      results.map((r) =>
        'records' in r
          ? { source: r.source, records: [...r.records.filter(rules.wanted), ...(r.source === 'A' ? firmware : [])] }
          : { source: r.source },
      ),
    );
    lastStatus = outcome.status;
    showStatus(outcome.status);
    catchUpConnection();
    return outcome.delayMs > rules.baseMs ? outcome.delayMs : slot.delayAfter(started); // back-off, else the next slot
  }

  async function emit(
    proposed: PushOutcome,
    connection: ReturnType<typeof connectionMessage>[] = [],
    listed?: ReturnType<typeof listedKeysOf<PolledError>>,
  ): Promise<void> {
    if (gate) {
      // coordinated: each msg goes out the moment the shared memory took it (see src/coordination/error-gate.ts)
      await gate.filter(proposed.raised, proposed.resolved, listed, (list, r) => {
        if (loop.stopped) return;
        if (list === 'raised') {
          const msg = markLost(raisedMessage(r.source as Source, r.record, instrument, template), r);
          void snapshots.attach([msg]).then(([m]) => node.send([m, null, null]));
          lab.raised(r.source as Source, r.record as PolledError);
        } else {
          node.send([null, markLost(resolvedMessage(r.source as Source, r.record, instrument), r), null]);
          lab.resolved(r.source as Source, r.record as PolledError);
        }
      });
      if (connection.length > 0 && !loop.stopped) node.send([null, null, connection]);
      return;
    }
    const raised = await snapshots.attach(proposed.raised.map((r) => raisedMessage(r.source, r.record, instrument, template)));
    const resolved = proposed.resolved.map((r) => resolvedMessage(r.source, r.record, instrument));
    if (raised.length > 0 || resolved.length > 0 || connection.length > 0) node.send([raised, resolved, connection]);
    for (const r of proposed.raised) lab.raised(r.source, r.record);
    for (const r of proposed.resolved) lab.resolved(r.source, r.record);
  }

  /** A frame on instincterrors: firmware errors raised or resolved from it at once, and a poll at once for the rest. */
  function onFrame(event: InstrumentEvent): void {
    if (loop.stopped || (gate && !gate.active)) return;
    const outcome = applyErrorFrame(watch, firmwareErrorFromFrame(event), rules);
    if (outcome.dropped && !saidDropped.has(watch)) {
      saidDropped.add(watch);
      logWarn(node, RED._('lh-error-poll.log.firmwareDropped', { max: MAX_OPEN_FIRMWARE }));
    }
    if (outcome.changed) {
      saveSoon();
      emit(outcome).catch((err: unknown) => logWarn(node, asLhError(err, node.type).message));
      showStatus(lastStatus ?? { kind: 'pending', count: watch.sources.A.size + watch.sources.B.size });
    }
    livePolls.frame(); // at once, or folded into the one follow-up of the poll in flight: a flood costs two at a time
  }

  function onSocket(change: EventStateChange): void {
    if (change.channel !== 'errors' || loop.stopped) return;
    const reaction = reactToSocket(socket, change.state, openFirmwareErrors(watch), saidUnavailable.has(watch));
    socket = reaction.state;
    if (reaction.logUnavailable) {
      saidUnavailable.add(watch);
      logInfo(node, RED._('lh-error-poll.log.unavailable', { reason: change.reason ?? '' }));
    }
    if (reaction.openAfterOutage > 0)
      logWarn(node, RED._('lh-error-poll.log.openAfterOutage', { count: reaction.openAfterOutage }));
    // at once, never held back: what happened while the socket was down is found now (the socket's back-off bounds it)
    if (reaction.pollNow && reaction.paced)
      slot.catchUp((since) => loop.catchUp(since)); // a deploy spreads
    else if (reaction.pollNow) livePolls.connected();
    if (lastStatus) showStatus(lastStatus);
  }

  /** Listens to instincterrors (opening the socket, shared with every node of the instrument) until the node closes. */
  function listen(): void {
    const off = [
      client.events.onState(onSocket),
      client.events.onErrors(onFrame),
      // the answer page and lh-answer-error find open firmware errors here: the instrument never lists them
      offerFirmwareErrors(w.server.instrumentKey, (id) => openFirmwareRecord(watch, id)),
    ];
    node.on('close', () => {
      for (const unsubscribe of off.splice(0)) unsubscribe();
      livePolls.stop();
      if (saveTimer) save(); // what the last frames changed is kept
    });
    const current = client.events.lastChange('errors'); // another node may hold the socket open already
    if (current) onSocket(current);
  }

  function begin(): void {
    if (loop.stopped) return; // closed while the context store was read
    slot.catchUp((since) => loop.catchUp(since)); // the first poll: a deploy of many nodes paces its first polls
    if (listening) listen();
  }

  /**
   * The server's view of this node's sources: how many requests in a row went unanswered. The node backs off from its
   * own Offline after on (when it says offline), as it would alone: a lower value on another node does not slow it.
   */
  function sharedConnection(): { failures: number; offlineAfter: number } {
    const view = w.server.connection?.view(sources);
    const failures = view?.state === 'offline' || view?.state === 'online' ? view.failures : 0;
    return { failures, offlineAfter: rules.offlineAfter };
  }

  /** After a poll: what changed while this node was not deployed (or a standby) is said now, once. */
  function catchUpConnection(): void {
    const connection = w.server.connection;
    if (connection) onConnection(connection.view(sources, rules.offlineAfter));
  }

  /** The server's connection state changed: offline or online once per change on output 3 (the status shows it). */
  function onConnection(view: ConnectionView): void {
    if (loop.stopped || (gate && !gate.active)) return; // a standby's holder reports it
    const { reported, change } = connectionChange(watch.connection, view);
    watch.connection = reported;
    // the lab hears the state after every poll, not only a change reported as a msg: an instrument online from the
    // start (or after a lease came back) is online in the state document, not unknown (the document folds repeats)
    if (view.state === 'offline' || (view.state === 'online' && view.failures === 0))
      lab.connection(view.state, view.state === 'offline' ? view.reason : undefined);
    if (!change) return;
    const interfaces = change.interfaces?.filter((api): api is Source => sources.includes(api as Source));
    const details = {
      failedPolls: change.failedPolls,
      reason: change.reason,
      interfaces: change.state === 'offline' ? interfaces : undefined,
    };
    // watching without Redis (coordination lost): every replica says it, marked
    const mark = gate && coordinationStatus(w.server.coordination) ? { coordination: 'lost' } : {};
    node.send([null, null, { ...connectionMessage(change.state, instrument, details), ...mark }]);
  }

  function showStatus(polled: StatusDecision): void {
    const coordinated = coordinationStatus(w.server.coordination);
    // a standby names who watches, above the connection state (the holder shows and reports that)
    status.standby(gate && !gate.active ? coordinated : undefined);
    if (coordinated) return status.other(coordinated);
    const decision = listening ? withFirmwareErrors(polled, watch) : polled;
    switch (decision.kind) {
      case 'refused': // a refused login is not "offline": the session holds further logins back, the poll only backs off
        return status.failed(decision.error);
      case 'unreachable':
        return status.unanswered(decision.error);
      case 'pending': {
        const key = socket === 'connected' && listening ? 'lh-error-poll.status.pendingLive' : 'pending';
        return decision.count > 0 ? status.warn(key, { count: decision.count }) : status.ok(key, { count: decision.count });
      }
    }
  }

  // once a day while the password is about to expire, on the connection output
  const offPassword = onPasswordWarning(
    client,
    (warning) => {
      node.send([null, null, passwordExpiryMessage(warning, instrument)]);
      lab.password(warning.daysLeft);
    },
    `poll ${node.id}`,
  );
  node.on('close', offPassword);

  status.idle('polling');
  status.follow(w.server.connection, { apis: sources as Api[], offlineAfter: rules.offlineAfter, onChange: onConnection });
  if (persist && !watch.restored) {
    readMemory((err, value) => {
      if (err) node.warn(RED._('lh-error-poll.errors.persist', { message: err.message }));
      else restore(value);
      begin();
    });
  } else {
    begin();
  }

  function restore(value: unknown): void {
    watch.restored = true;
    const saved = readSavedWatch(value, w.server.instrumentKey);
    if (!saved) return;
    watch.sources.A.restore(saved.A);
    watch.sources.B.restore(saved.B);
  }

  return loop;
}
