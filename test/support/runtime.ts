import path from 'path';

import helper from 'node-red-node-test-helper';

import { Simulator, SimulatorOptions } from '../../src/simulator';

/** The Node-RED runtime under test: `node-red` (4.x) by default, `LH_NODE_RED=node-red-3` for the oldest supported 3.1. */
export const NODE_RED_PACKAGE = process.env.LH_NODE_RED || 'node-red';
const nodeRedDir = path.dirname(require.resolve(`${NODE_RED_PACKAGE}/package.json`));
helper.init(require.resolve(NODE_RED_PACKAGE));

/**
 * The helper's setFlows gives Node-RED 300 ms to start the new flows and fails past it ("timeout waiting event"): a
 * busy machine takes longer (a CI-like run beside a CPU hog failed there). The same deploy, waiting for Node-RED's
 * `flows:started` as long as the test's own timeout allows (the listener is set before the deploy: never missed).
 */
interface HelperInternals {
  _redNodes: { setFlows(flows: unknown, credentials: unknown, type: string): Promise<unknown> };
  _events: { once(event: string, listener: () => void): void; off(event: string, listener: () => void): void };
}
const internals = helper as unknown as HelperInternals;
(helper as unknown as { setFlows: (flows: unknown, type?: string, credentials?: unknown) => Promise<void> }).setFlows = async (
  flows: unknown,
  type = 'full',
  credentials: unknown = {},
): Promise<void> => {
  let onStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (onStarted = resolve));
  internals._events.once('flows:started', onStarted);
  try {
    await internals._redNodes.setFlows(flows, credentials ?? {}, type);
  } catch (err) {
    internals._events.off('flows:started', onStarted);
    throw err;
  }
  await started;
};

/** A module of the runtime under test (e.g. '@node-red/util'), from that runtime's own dependency tree. */
export function runtimeModule<T>(name: string): T {
  return require(require.resolve(name, { paths: [nodeRedDir] })) as T;
}

/**
 * The runtime's console log, errors only: each helper.load() registers the helper's own node type without a node-set
 * name and loads unencrypted test credentials, and Node-RED warns about both at every load (two lines per test,
 * hundreds per run, none about this package). helper.startServer() switches it off entirely. LH_TEST_LOG=warn (info,
 * debug, trace) shows the runtime's log again.
 */
runtimeModule<{ log: { init(settings: unknown): void } }>('@node-red/util').log.init({
  logging: { console: { level: process.env.LH_TEST_LOG || 'error' } },
});

export { helper };

/** The test helper's runtime settings (settings.js), which its type declarations leave out. */
export function runtimeSettings(settings: Record<string, unknown>): void {
  (helper as unknown as { settings(s: Record<string, unknown>): void }).settings(settings);
}

type NodeModule = (RED: unknown) => void;

const root = path.resolve(__dirname, '..', '..');
const pkg = require(path.join(root, 'package.json')) as { 'node-red': { nodes: Record<string, string> } };

/** The built node modules, as Node-RED loads them from package.json. */
export function packageNodes(): NodeModule[] {
  return Object.values(pkg['node-red'].nodes).map((file) => require(path.join(root, file)) as NodeModule);
}

/** The core tls-config node of that same runtime (resolved from its own dependency tree). */
const coreTlsConfig = require(
  path.join(
    path.dirname(require.resolve('@node-red/nodes/package.json', { paths: [nodeRedDir] })),
    'core',
    'network',
    '05-tls.js',
  ),
) as NodeModule;

interface RedApi {
  nodes: { registerType(type: string, ctor: unknown, options?: { credentials?: unknown }): void };
}

/**
 * The core tls-config node. The test helper's registry cannot store per-node settings (it fails on the
 * `settings` option of registerType), so that option is left out; the node itself runs unchanged.
 */
export const tlsConfigNode: NodeModule = (RED) => {
  const red = RED as RedApi;
  const nodes = Object.create(red.nodes) as RedApi['nodes'];
  nodes.registerType = (type, ctor, options) => red.nodes.registerType(type, ctor, { credentials: options?.credentials });
  coreTlsConfig(Object.assign(Object.create(red as object) as object, { nodes }));
};

/** The CA file a tls-config node points at to trust the simulator's interface B. */
export const SIMULATOR_CA_FILE = path.join(root, 'nodes', 'simulator', 'certs', 'ca.pem');

export const USER = { username: 'admin', password: 'labwire' };

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = new Simulator(options);
  await sim.start();
  return sim;
}

export interface ServerFlowOptions {
  id?: string;
  withB?: boolean;
  clientKey?: string;
  timeout?: number;
  /** the tls-config node's id; `<id>-tls` unless given */
  tlsId?: string;
  credentials?: Record<string, string>;
  config?: Record<string, unknown>;
}

/** An lh-server config node (plus a tls-config trusting the simulator's CA) and its credentials. */
export function serverFlow(
  sim: Simulator,
  options: ServerFlowOptions = {},
): {
  nodes: Record<string, unknown>[];
  credentials: Record<string, Record<string, string>>;
} {
  const id = options.id ?? 'server';
  const withB = options.withB ?? true;
  const tlsId = options.tlsId ?? `${id}-tls`;
  const nodes: Record<string, unknown>[] = [
    {
      id,
      type: 'lh-server',
      name: 'sim',
      baseUrl: sim.baseUrl,
      instrumentUrl: withB ? sim.instrumentUrl : '',
      clientKey: options.clientKey ?? 'nodered1',
      tls: withB ? tlsId : '',
      timeout: options.timeout ?? 5000,
      ...options.config,
    },
  ];
  if (withB)
    nodes.push({
      id: tlsId,
      type: 'tls-config',
      name: 'sim CA',
      cert: '',
      key: '',
      ca: SIMULATOR_CA_FILE,
      verifyservercert: true,
    });
  return { nodes, credentials: { [id]: options.credentials ?? { ...USER } } };
}

/** Loads every node of the package, the core tls-config node and the given flow into a real runtime. */
export async function loadFlow(
  flow: Record<string, unknown>[],
  credentials: Record<string, Record<string, string>> = {},
): Promise<void> {
  await helper.load([...packageNodes(), tlsConfigNode], flow, credentials);
}

interface Emitter {
  once(event: string, listener: (msg: Record<string, unknown>) => void): unknown;
}

/** Node-RED keeps a node's input listeners apart from its other events (Node.prototype.on): these, or none. */
interface InputListeners {
  _inputCallback?: unknown;
  _inputCallbacks?: unknown[] | null;
  on(event: string, listener: (msg: Record<string, unknown>) => void): unknown;
  removeListener(event: string, listener: unknown): unknown;
}

/** How many input listeners a node has besides `mine`. */
function otherInputListeners(node: InputListeners, mine: unknown): number {
  if (node._inputCallbacks) return node._inputCallbacks.filter((l) => l !== mine).length;
  return node._inputCallback && node._inputCallback !== mine ? 1 : 0;
}

/** The helper node behind the standard flow's Catch node ('caught'), when the flow has one and it is not `awaited`. */
function catchHelper(awaited: Emitter): InputListeners | undefined {
  let caught: unknown;
  try {
    caught = helper.getNode('caught');
  } catch {
    return undefined; // no runtime started
  }
  return caught && caught !== awaited ? (caught as InputListeners) : undefined;
}

/**
 * The next message a helper node receives. When the flow's Catch helper ('caught') gets a msg first while the test
 * does not watch it (no other input listener there: no collect(), no nextMessage()), rejects at once naming that
 * failure: a node that failed instead of sending would otherwise leave this waiting, saying nothing, until the
 * test's timeout.
 */
export function nextMessage(node: Emitter): Promise<Record<string, unknown>> {
  const caught = catchHelper(node);
  if (!caught || otherInputListeners(caught, undefined) > 0) return new Promise((resolve) => node.once('input', resolve));
  return new Promise((resolve, reject) => {
    // on(), not once(), on the Catch helper, let go after the delivery: Node-RED reads an input listener's parameters
    // from its source (once()'s wrapper hides them) and walks a node's input listeners by a count taken before
    const failed = (msg: Record<string, unknown>): void => {
      if (otherInputListeners(caught, failed) > 0) return; // the test watches the Catch node since: its msg, not ours
      queueMicrotask(() => caught.removeListener('input', failed));
      const error = (msg.error ?? msg._error) as Record<string, unknown> | undefined;
      reject(new Error(`expected a msg at ${nameOf(node)}; the Catch node got a failure instead: ${JSON.stringify(error)}`));
    };
    node.once('input', (msg) => {
      queueMicrotask(() => caught.removeListener('input', failed));
      resolve(msg);
    });
    caught.on('input', failed);
  });
}

function nameOf(node: Emitter): string {
  const id = (node as { id?: unknown }).id;
  return typeof id === 'string' ? `helper node '${id}'` : 'the node';
}

/** Every message a node receives, as it happens. */
export function collect(node: {
  on(event: string, l: (msg: Record<string, unknown>) => void): unknown;
}): Record<string, unknown>[] {
  const seen: Record<string, unknown>[] = [];
  node.on('input', (msg) => seen.push(msg));
  return seen;
}

export function startServer(): Promise<void> {
  return new Promise((resolve, reject) => helper.startServer((err) => (err ? reject(err) : resolve())));
}

export function stopServer(): Promise<void> {
  return new Promise((resolve, reject) => helper.stopServer((err) => (err ? reject(err) : resolve())));
}
