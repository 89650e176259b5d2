/**
 * The shared frame of the node tests: the mocha hooks around a simulated instrument, and the standard flow of
 * one node under test (its lh-server config node, a helper node 'out' on its output, a Catch node scoped to it
 * wired to a helper node 'caught').
 */
import assert from 'node:assert/strict';
import path from 'path';

import { Simulator, SimulatorOptions } from '../../src/simulator';
import {
  collect,
  helper,
  loadFlow,
  nextMessage,
  serverFlow,
  ServerFlowOptions,
  startServer,
  stopServer,
  tlsConfigNode,
} from './runtime';

type Msg = Record<string, unknown>;
type NodeModule = (RED: unknown) => void;

export interface InstrumentOptions {
  /** Options of the simulator, started once for the describe block. */
  simulator?: SimulatorOptions;
  /** Also start the test helper's HTTP server (admin endpoints) for the describe block: see useAdminServer(). */
  adminServer?: boolean;
  /** More clean-up after each test, run after helper.unload() and sim.reset(). */
  afterEach?: () => void | Promise<void>;
}

/**
 * Registers the hooks of a describe block that tests against one simulator: start it in before(), unload the
 * flow and reset the simulator after each test, stop it in after(). Returns that simulator; it listens from
 * before() on (use it inside hooks and tests only).
 */
export function useInstrument(options: InstrumentOptions = {}): Simulator {
  const sim = new Simulator(options.simulator);
  before(async function () {
    await sim.start();
  });
  if (options.adminServer) useAdminServer();
  after(async function () {
    await sim.stop();
  });
  afterEach(async function () {
    await helper.unload();
    sim.reset();
    await options.afterEach?.();
  });
  return sim;
}

/** Starts the test helper's HTTP server (helper.request()) in before() and stops it in after(). */
export function useAdminServer(): void {
  before(async function () {
    await startServer();
  });
  after(async function () {
    await stopServer();
  });
}

/** A built node module of this package (nodes/nodes/<type>/<type>.js). */
export function builtNode(type: string): NodeModule {
  return require(path.resolve(__dirname, '..', '..', 'nodes', 'nodes', type, `${type}.js`)) as NodeModule;
}

export interface NodeFlowOptions {
  /** Options of the lh-server config node (serverFlow); interface B only when asked: { withB: true }. */
  server?: ServerFlowOptions;
  /**
   * Load only these node types (built modules) and the core tls-config node, instead of every node of
   * package.json (some of which may not be built yet).
   */
  only?: string[];
  /** Place the flow nodes on a tab of this label with positions, as in a real flows.json (Node-RED then stops flow nodes before config nodes). */
  tab?: string;
}

/** The node under test of the standard flow, deployed. */
export interface LoadedNode {
  /** The node under test. */
  node: ReturnType<typeof helper.getNode>;
  /** The helper node on its output. */
  out: ReturnType<typeof helper.getNode>;
  /** The helper node behind the Catch node scoped to it. */
  caught: ReturnType<typeof helper.getNode>;
  /** Sends msg to the node and resolves with the next message on its output. */
  run(msg: Msg): Promise<Msg>;
  /** Sends msg to the node and resolves with the next message its Catch node passes on. */
  runCaught(msg: Msg): Promise<Msg>;
  /** runCaught(), and asserts that nothing reached the output meanwhile. */
  runFailing(msg: Msg): Promise<Msg>;
  /**
   * runFailing(), and asserts that the failure names `field` (msg._error.field) with a message matching
   * `message`; resolves with msg._error.
   */
  expectFailure(msg: Msg, field: string | undefined, message: RegExp): Promise<Msg>;
}

/**
 * Builds and loads the standard flow: serverFlow(sim) as config node 'server'; the node under test (`node`,
 * with its id and type) using it, wired to a helper node 'out'; a Catch node 'catcher' scoped to it, wired to
 * a helper node 'caught'.
 */
export async function loadNode(
  sim: Simulator,
  node: Msg & { id: string; type: string },
  options: NodeFlowOptions = {},
): Promise<LoadedNode> {
  const server = serverFlow(sim, { withB: false, ...options.server });
  const onTab = options.tab ? { z: 'tab', x: 100, y: 100 } : {};
  const flow: Msg[] = [
    ...(options.tab ? [{ id: 'tab', type: 'tab', label: options.tab }] : []),
    ...server.nodes,
    { server: 'server', wires: [['out']], ...onTab, ...node },
    { id: 'out', type: 'helper', ...onTab },
    { id: 'catcher', type: 'catch', scope: [node.id], wires: [['caught']], ...onTab },
    { id: 'caught', type: 'helper', ...onTab },
  ];
  if (options.only) await helper.load([tlsConfigNode, ...options.only.map(builtNode)], flow, server.credentials);
  else await loadFlow(flow, server.credentials);

  const loaded: LoadedNode = {
    node: helper.getNode(node.id),
    out: helper.getNode('out'),
    caught: helper.getNode('caught'),
    run(msg) {
      // nextMessage() rejects at once, naming it, when the node fails to its Catch node instead (nobody else watching)
      const out = nextMessage(loaded.out);
      loaded.node.receive(msg);
      return out;
    },
    runCaught(msg) {
      const caught = nextMessage(loaded.caught);
      loaded.node.receive(msg);
      return caught;
    },
    async runFailing(msg) {
      const outputs = collect(loaded.out);
      const failed = await loaded.runCaught(msg);
      assert.equal(outputs.length, 0);
      return failed;
    },
    async expectFailure(msg, field, message) {
      const outputs = collect(loaded.out);
      const details = (await loaded.runCaught(msg))._error as Msg;
      assert.equal(details.field, field);
      assert.match(String(details.message), message);
      assert.equal(outputs.length, 0);
      return details;
    },
  };
  return loaded;
}

/** loadNode() for a node whose configuration each test sets: load, run or fail it with one call. */
export interface ConfiguredNode {
  /** loadNode() with this node configuration over the base one. */
  load(config: Msg): Promise<LoadedNode>;
  /** Loads the node with `config`, sends msg, resolves with the next message on its output. */
  run(config: Msg, msg: Msg): Promise<Msg>;
  /** Loads the node with `config`, sends msg, expects a failure at the Catch node and no output; resolves with msg._error ({message, statusCode, operation, ...}). */
  runFailing(config: Msg, msg: Msg): Promise<Msg>;
}

export function configuredNode(
  sim: Simulator,
  base: Msg & { id: string; type: string },
  options: NodeFlowOptions = {},
): ConfiguredNode {
  const load = (config: Msg): Promise<LoadedNode> => loadNode(sim, { ...base, ...config }, options);
  return {
    load,
    run: async (config, msg) => (await load(config)).run(msg),
    runFailing: async (config, msg) => (await (await load(config)).runFailing(msg))._error as Msg,
  };
}
