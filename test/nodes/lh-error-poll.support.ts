import path from 'path';

import { Simulator } from '../../src/simulator';
import {
  collect,
  helper,
  loadFlow,
  packageNodes,
  runtimeModule,
  serverFlow,
  ServerFlowOptions,
  tlsConfigNode,
} from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
interface Listenable {
  on(event: string, l: (arg: Msg) => void): unknown;
  removeListener(event: string, l: (arg: Msg) => void): unknown;
}

const POLL_PATHS: Record<'A' | 'B', string> = {
  A: '/api/v1/errors/check-for-pending-errors',
  B: '/api/vector/v3/instrument-errors/unhandled',
};

/**
 * Resolves once `n` more polls of `source` have been handled completely: polls never overlap, so when the
 * simulator receives the (n+1)-th poll request from now, the n-th poll's answer has been processed (sent,
 * saved, status set). Counts the requests of every poll node of that simulator.
 */
export function pollsDone(sim: Simulator, n: number, source: 'A' | 'B' = 'A', timeoutMs = 15000): Promise<void> {
  const polls = (): number => sim.requests.filter((r) => r.path === POLL_PATHS[source]).length;
  const target = polls() + n + 1;
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const check = setInterval(() => {
      const seen = polls();
      if (seen >= target) {
        clearInterval(check);
        resolve();
      } else if (Date.now() > deadline) {
        clearInterval(check);
        reject(new Error(`${seen - target + n + 1} of ${n + 1} poll requests of ${source} within ${timeoutMs} ms`));
      }
    }, 5);
  });
}

/** Resolves with the next status the node `id` shows that matches `test`. */
/**
 * The lh-server `serverId`'s socket on `channel` is open on both ends: the simulator has it and the client says
 * connected (a frame pushed now reaches the node). Wait on this instead of a fixed sleep.
 */
export function socketOpen(sim: Simulator, channel: 'errors' | 'events' = 'errors', serverId = 'server'): boolean {
  const server = helper.getNode(serverId) as unknown as { client?: { events?: { state(c: string): string } } } | null;
  return sim.eventSocketInfo.counts[channel] === 1 && server?.client?.events?.state(channel) === 'connected';
}

export function statusWhere(id: string, test: (status: Msg) => boolean, timeoutMs = 15000): Promise<Msg> {
  const node = helper.getNode(id) as unknown as {
    on(e: string, l: (c: { args: Msg[] }) => void): unknown;
    removeListener(e: string, l: (c: { args: Msg[] }) => void): unknown;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      node.removeListener('call:status', check);
      reject(new Error(`${id}: no matching status within ${timeoutMs} ms`));
    }, timeoutMs);
    function check(call: { args: Msg[] }): void {
      if (!test(call.args[0])) return;
      clearTimeout(timer);
      node.removeListener('call:status', check);
      resolve(call.args[0]);
    }
    node.on('call:status', check);
  });
}

/** Loads the context stores configured with runtimeSettings(): the test helper never does, a Node-RED start does. */
export async function loadContextStores(): Promise<void> {
  await runtimeModule<{ load(): Promise<void> }>('@node-red/runtime/lib/nodes/context').load();
}

/** Resolves with the first message a helper node receives that matches `test`. */
export function messageWhere(id: string, test: (msg: Msg) => boolean, timeoutMs = 15000): Promise<Msg> {
  const node = helper.getNode(id) as unknown as Listenable;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      node.removeListener('input', check);
      reject(new Error(`${id}: no matching message within ${timeoutMs} ms`));
    }, timeoutMs);
    function check(msg: Msg): void {
      if (!test(msg)) return;
      clearTimeout(timer);
      node.removeListener('input', check);
      resolve(msg);
    }
    node.on('input', check);
  });
}

/** The number of active timers (setTimeout/setInterval) of the process. */
export function activeTimeouts(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

/**
 * serverFlow() of test/support/runtime.ts, with `cert` and `key` set on its tls-config node: the core
 * tls-config node calls n.cert.trim() and throws without them (reported; runtime.ts is not ours to edit).
 */
export function bServerFlow(sim: Simulator, options: ServerFlowOptions = {}): ReturnType<typeof serverFlow> {
  const flow = serverFlow(sim, options);
  for (const n of flow.nodes) if (n.type === 'tls-config') Object.assign(n, { cert: n.cert ?? '', key: n.key ?? '' });
  return flow;
}

const hooks = runtimeModule<{ hooks: unknown }>('@node-red/util').hooks as {
  add(name: string, fn: (event: { destination: { id: string }; msg: Msg }) => void): void;
  remove(name: string): void;
};

/**
 * Every message delivered to the node `id` from now on, across redeploys (a Node-RED hook, so nothing is missed
 * between a deploy and the moment a test could attach to the new helper node). Stop with stopRecording().
 */
export function recordDeliveries(id: string): Msg[] {
  const seen: Msg[] = [];
  const label = `lhtest${id.replace(/[^A-Za-z0-9]/g, '')}${labels.length}`;
  labels.push(label);
  hooks.add(`preDeliver.${label}`, (event) => {
    if (event.destination.id === id) seen.push(event.msg);
  });
  return seen;
}

const labels: string[] = [];

export function stopRecording(): void {
  for (const label of labels.splice(0)) hooks.remove(`*.${label}`);
}

const changeNode = require(
  path.join(path.dirname(require.resolve('@node-red/nodes/package.json')), 'core', 'function', '15-change.js'),
) as (RED: unknown) => void;

/** loadFlow() plus the core change node, for flows that add one property the way users do. */
export async function loadFlowWithChange(
  flow: Record<string, unknown>[],
  credentials: Record<string, Record<string, string>>,
): Promise<void> {
  await helper.load([tlsConfigNode, ...packageNodes(), changeNode], flow, credentials);
}

/** A change node setting msg[property] to a JSON value. */
export function setProperty(id: string, property: string, value: unknown, wires: string[]): Record<string, unknown> {
  return {
    id,
    type: 'change',
    rules: [{ t: 'set', p: property, pt: 'msg', to: JSON.stringify(value), tot: 'json' }],
    wires: [wires],
  };
}

/** lh-state at 20 documents a second, no machine reads, no repeats: its documents follow the errors alone. */
/** The usual watch of these tests: lh-error-poll `poll` on lh-server `server`, source A, every 0.3 s (`fields` override). */
export function pollNode(wires: string[][], fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires, ...fields };
}

export function stateNode(wires: string[][], server = 'server'): Record<string, unknown> {
  return { id: 'state', type: 'lh-state', server, rate: '20', machineInterval: '0', repeat: '0', wires };
}

/** What liveWatch gives a test: the msgs of the three outputs and the lh-server's client. */
export interface LiveWatch {
  raised: Msg[];
  resolved: Msg[];
  connection: Msg[];
  client: { prep: { pendingErrors(): Promise<unknown[]> }; events: { state(channel: string): string } };
}

/**
 * An lh-server (A only) and an A error poll `poll` listening for pushes, with its three outputs collected (no deck
 * photo; `fields` override the poll's settings): resolves once the errors socket is connected and the first poll went
 * out, so that every later poll is one the test caused.
 */
export async function liveWatch(sim: Simulator, fields: Record<string, unknown> = {}): Promise<LiveWatch> {
  const server = bServerFlow(sim, { withB: false });
  const poll = { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 3600, snapshot: false };
  await loadFlow(
    [
      ...server.nodes,
      { ...poll, ...fields, wires: [['raised'], ['resolved'], ['connection']] },
      { id: 'raised', type: 'helper' },
      { id: 'resolved', type: 'helper' },
      { id: 'connection', type: 'helper' },
    ],
    server.credentials,
  );
  const watch: LiveWatch = {
    raised: collect(helper.getNode('raised')),
    resolved: collect(helper.getNode('resolved')),
    connection: collect(helper.getNode('connection')),
    client: (helper.getNode('server') as unknown as { client: LiveWatch['client'] }).client,
  };
  await until(
    () => sim.eventSocketInfo.counts.errors === 1 && watch.client.events.state('errors') === 'connected',
    'live',
    45000,
  );
  await until(() => sim.requests.some((r) => r.path === POLL_PATHS.A), 'the first poll');
  return watch;
}
