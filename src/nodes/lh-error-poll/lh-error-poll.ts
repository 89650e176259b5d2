import { asLhError, LhError, LiquidHandlerClient } from '../../client';
import { InstrumentInfo, instrumentInfo } from '../shared/error-records';
import { asNode, Node, NodeConfig, NodeMessage, Red } from '../shared/node-red';
import { logError, logWarn } from '../shared/node-log';
import { requireClient, LhServerNode } from '../shared/server-node';
import { failureReason, Status } from '../shared/status';
import { connectionMessage, errorKey, raisedMessage, resolvedMessage } from './error-messages';
import { backoffMs, desyncMs, intervalMs, PollLoop, withJitter } from './poll-loop';
import { forgetWatch, Source, watchFor, watchKey, WatchState } from './seen-errors';
import { severityFilter } from './severity';

const CONTEXT_KEY = 'lhErrorPoll';
const DEFAULT_OFFLINE_AFTER = 3;

type ErrorRecord = Record<string, unknown>;

/** A failure that means the instrument did not answer (as opposed to answering with a refusal). */
function isUnreachable(err: LhError): boolean {
  if (err.kind === 'network' || err.kind === 'timeout') return true;
  return err.kind === 'http' && err.statusCode !== undefined && err.statusCode >= 500;
}

function sourcesOf(choice: unknown): Source[] {
  if (choice === 'B') return ['B'];
  if (choice === 'both') return ['A', 'B'];
  return ['A'];
}

function offlineAfter(value: unknown): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : DEFAULT_OFFLINE_AFTER;
}

async function fetchErrors(client: LiquidHandlerClient, source: Source): Promise<ErrorRecord[]> {
  const list = source === 'A' ? await client.prep.pendingErrors() : await client.instrument.unhandledErrors();
  return (list as unknown[]).filter((e): e is ErrorRecord => !!e && typeof e === 'object' && (e as ErrorRecord).handled !== true);
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
  const baseMs = intervalMs(config.interval);
  const grace = offlineAfter(config.offlineAfter);
  const wanted = severityFilter(config.minSeverity);
  const template = typeof config.template === 'string' ? config.template : '';
  const persist = config.persist === true || config.persist === 'true';
  const store = typeof config.store === 'string' && config.store.trim() !== '' ? config.store.trim() : undefined;
  let refusedPolls = 0;
  let lastProblem = '';
  let desynced = false;

  const loop = new PollLoop(pollOnce);

  function save(): void {
    if (!persist) return;
    const value = { version: 1, instrumentKey: w.server.instrumentKey, A: watch.sources.A.snapshot(), B: watch.sources.B.snapshot() };
    node.context().set(CONTEXT_KEY, value, store, (err) => {
      if (err) node.warn(RED._('lh-error-poll.errors.persist', { message: err.message }));
    });
  }

  function report(err: LhError): void {
    const text = err.message;
    if (text !== lastProblem) logWarn(node, text);
    lastProblem = text;
  }

  async function pollOnce(): Promise<number> {
    const results = await Promise.allSettled(sources.map((s) => fetchErrors(client, s)));
    if (loop.stopped) return baseMs; // closed meanwhile: the result belongs to nobody

    const raised: NodeMessage[] = [];
    const resolved: NodeMessage[] = [];
    const unreachable: { source: Source; err: LhError }[] = [];
    const refused: LhError[] = [];
    results.forEach((result, i) => {
      const source = sources[i];
      if (result.status === 'rejected') {
        const err = asLhError(result.reason, source === 'A' ? 'check-for-pending-errors' : 'unhandled-errors');
        if (isUnreachable(err)) unreachable.push({ source, err });
        else refused.push(err);
        return;
      }
      const diff = watch.sources[source].update(
        result.value,
        (record) => errorKey(source, record),
        (record) => wanted(record.severity),
      );
      for (const record of diff.raised) raised.push(raisedMessage(source, record, instrument, template));
      for (const record of diff.resolved) resolved.push(resolvedMessage(source, record as ErrorRecord, instrument));
    });
    if (raised.length > 0 || resolved.length > 0) save();

    const connection: NodeMessage[] = [];
    if (unreachable.length > 0) {
      watch.unreachablePolls++;
      if (watch.unreachablePolls >= grace && watch.connection !== 'offline') {
        watch.connection = 'offline';
        connection.push(
          connectionMessage('offline', instrument, {
            failedPolls: watch.unreachablePolls,
            reason: unreachable[0].err.message,
            interfaces: unreachable.map((u) => u.source),
          }),
        );
      }
    } else if (refused.length === 0) {
      if (watch.connection === 'offline') {
        connection.push(connectionMessage('online', instrument, { failedPolls: watch.unreachablePolls }));
      }
      watch.connection = 'online';
      watch.unreachablePolls = 0;
    }
    refusedPolls = refused.length > 0 ? refusedPolls + 1 : 0;

    if (raised.length > 0 || resolved.length > 0 || connection.length > 0) node.send([raised, resolved, connection] as unknown as NodeMessage[]);

    if (refused.length > 0) {
      // A refused login is not "offline": the session holds further logins back, the poll only backs off.
      report(refused[0]);
      status.failed(refused[0]);
    } else if (watch.connection === 'offline') {
      node.status({ fill: 'red', shape: 'ring', text: RED._('common.status.offline') });
    } else if (unreachable.length > 0) {
      node.status({ fill: 'yellow', shape: 'ring', text: failureReason(unreachable[0].err) });
    } else {
      lastProblem = '';
      const count = pendingCount();
      if (count > 0) status.warn('pending', { count });
      else status.ok('pending', { count });
    }

    if (refused.length > 0) return withJitter(backoffMs(baseMs, refusedPolls, 0));
    const delay = backoffMs(baseMs, watch.unreachablePolls, grace);
    if (delay > baseMs) return withJitter(delay);
    // Jitter on every poll would add up to 10 % to the detection latency; a one-off phase shift spreads nodes as well.
    if (!desynced) {
      desynced = true;
      return desyncMs(baseMs);
    }
    return baseMs;
  }

  function pendingCount(): number {
    return sources.reduce((n, s) => n + watch.sources[s].size, 0);
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
    if (!value || typeof value !== 'object') return;
    const saved = value as Record<string, unknown>;
    if (saved.instrumentKey !== w.server.instrumentKey) return;
    watch.sources.A.restore(saved.A);
    watch.sources.B.restore(saved.B);
  }

  return loop;
}
