import { asLhError, LhError, LiquidHandlerClient } from '../../client';
import { InstrumentInfo, instrumentInfo } from '../shared/error-records';
import { PolledError } from '../shared/poll-messages';
import { asNode, Node, NodeConfig, NodeMessage, Red } from '../shared/node-red';
import { logError, logWarn } from '../shared/node-log';
import { migrateConfig } from '../shared/migrations';
import { requireClient, LhServerNode } from '../shared/server-node';
import { isChecked } from '../shared/settings';
import { failureReason, Status } from '../shared/status';
import { connectionMessage, errorKey, raisedMessage, resolvedMessage } from './error-messages';
import { applyPoll, newRunState, offlineAfterOf, pendingOnly, PollOutcome, PollRules, SourceResult, sourcesOf, StatusDecision } from './poll-decisions';
import { intervalMs, PollLoop } from './poll-loop';
import { forgetWatch, readSavedWatch, savedWatch, Source, watchFor, watchKey, WatchState } from './seen-errors';
import { severityFilter } from './severity';

const CONTEXT_KEY = 'lhErrorPoll';

/** One source's pending errors, or why it did not answer (never throws). */
async function fetchErrors(client: LiquidHandlerClient, source: Source): Promise<SourceResult<PolledError>> {
  try {
    const list = source === 'A' ? await client.prep.pendingErrors() : await client.instrument.unhandledErrors();
    return { source, records: pendingOnly<PolledError>(list) };
  } catch (err) {
    return { source, error: asLhError(err, source === 'A' ? 'check-for-pending-errors' : 'unhandled-errors') };
  }
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
        throw new LhError(RED._('lh-error-poll.errors.noInstrumentUrl'), { kind: 'config', operation: node.type, field: 'source' });
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
  const run = newRunState();
  const loop = new PollLoop(pollOnce);

  function save(): void {
    if (!persist) return;
    node.context().set(CONTEXT_KEY, savedWatch(watch, w.server.instrumentKey), store, (err) => {
      if (err) node.warn(RED._('lh-error-poll.errors.persist', { message: err.message }));
    });
  }

  async function pollOnce(): Promise<number> {
    const results = await Promise.all(sources.map((source) => fetchErrors(client, source)));
    if (loop.stopped) return rules.baseMs; // closed meanwhile: the result belongs to nobody
    const outcome = applyPoll(watch, run, results, rules);
    emit(outcome);
    if (outcome.warn) logWarn(node, outcome.warn);
    showStatus(outcome.status);
    return outcome.delayMs;
  }

  /** Sends what a poll (or a push: applyPush() gives the same shape without `connection`) found, once, and saves it. */
  function emit(outcome: Pick<PollOutcome<PolledError>, 'raised' | 'resolved' | 'changed' | 'connection'>): void {
    if (outcome.changed) save();
    const raised = outcome.raised.map((r) => raisedMessage(r.source, r.record, instrument, template));
    const resolved = outcome.resolved.map((r) => resolvedMessage(r.source, r.record, instrument));
    const connection = outcome.connection ? [connectionMessage(outcome.connection.state, instrument, outcome.connection)] : [];
    if (raised.length > 0 || resolved.length > 0 || connection.length > 0) node.send([raised, resolved, connection]);
  }

  function showStatus(decision: StatusDecision): void {
    switch (decision.kind) {
      case 'refused': // a refused login is not "offline": the session holds further logins back, the poll only backs off
        return status.failed(decision.error);
      case 'offline':
        return node.status({ fill: 'red', shape: 'ring', text: RED._('common.status.offline') });
      case 'unreachable':
        return node.status({ fill: 'yellow', shape: 'ring', text: failureReason(decision.error) });
      case 'pending':
        return decision.count > 0 ? status.warn('pending', { count: decision.count }) : status.ok('pending', { count: decision.count });
    }
  }

  status.idle('polling');
  if (persist && !watch.restored) {
    node.context().get(CONTEXT_KEY, store, (err, value) => {
      if (err) node.warn(RED._('lh-error-poll.errors.persist', { message: err.message }));
      else restore(value);
      loop.start(0);
    });
  } else {
    loop.start(0);
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
