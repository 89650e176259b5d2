/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * A real Node-RED runtime embedded in the benchmark process (`require('node-red')`, the way an application embeds it),
 * loading this package the way scripts/start.js does (`nodesDir: [repoRoot]`, i.e. from the built `nodes/` via
 * package.json) and the core nodes (http request, function, ...). No HTTP listener: the admin and node HTTP roots
 * are off, flows are deployed with the runtime API and driven with `node.receive(msg)`.
 */
import fs from 'fs';
import http from 'http';
import os from 'os';
import path from 'path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export type Msg = Record<string, unknown>;
export type FlowNode = Record<string, unknown> & { id: string; type: string };

/** The part of a runtime node the benchmarks touch (the Node-RED boundary). */
export interface RuntimeNode {
  id: string;
  type: string;
  receive(msg: Msg): void;
  on(event: 'input', listener: (msg: Msg, send: (m: Msg) => void, done: (err?: Error) => void) => void): void;
  on(event: string, listener: (...args: any[]) => void): void;
}

export interface EmbeddedNodeRed {
  version: string;
  deploy(flow: FlowNode[]): Promise<void>;
  node(id: string): RuntimeNode;
  /** Calls `listener` for every msg that reaches node `id` (attached after each deploy). */
  onInput(id: string, listener: (msg: Msg) => void): void;
  stop(): Promise<void>;
}

let started = false;

export async function startNodeRed(extraSettings: Record<string, unknown> = {}): Promise<EmbeddedNodeRed> {
  if (started) throw new Error('Node-RED can be initialised once per process');
  started = true;
  const RED: any = require('node-red');
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-bench-'));
  RED.init(http.createServer(), {
    userDir,
    flowFile: 'flows.json',
    nodesDir: [REPO_ROOT],
    httpAdminRoot: false,
    httpNodeRoot: false,
    disableEditor: true,
    credentialSecret: false,
    logging: { console: { level: process.env.LH_BENCH_LOG ?? 'warn', metrics: false, audit: false } },
    editorTheme: { projects: { enabled: false } },
    functionGlobalContext: {},
    ...extraSettings,
  });
  await RED.start();
  // The first deploy after start loads the (empty) credential store and would drop credentials given with it.
  await deploy(RED, []);
  return {
    version: String(RED.version),
    deploy: (flow: FlowNode[]) => deploy(RED, flow),
    node(id: string): RuntimeNode {
      const n = RED.nodes.getNode(id) as RuntimeNode | null;
      if (!n) throw new Error(`node ${id} is not deployed`);
      return n;
    },
    onInput(id: string, listener: (msg: Msg) => void): void {
      const n = RED.nodes.getNode(id) as RuntimeNode | null;
      if (!n) throw new Error(`node ${id} is not deployed`);
      n.on('input', (msg: Msg, _send: unknown, done: (err?: Error) => void) => {
        listener(msg);
        if (typeof done === 'function') done();
      });
    },
    async stop(): Promise<void> {
      await deploy(RED, []);
      await RED.stop();
      fs.rmSync(userDir, { recursive: true, force: true });
    },
  };
}

/** A full deploy; resolves once the new flows have started (setFlows itself resolves before they start). */
async function deploy(RED: any, flow: FlowNode[]): Promise<void> {
  let rev: string | undefined;
  let startedRevs: string[] = [];
  let wake: (() => void) | undefined;
  const listener = (event: { id?: string; payload?: { revision?: string } }): void => {
    if (event.id !== 'runtime-deploy' || !event.payload?.revision) return;
    startedRevs.push(event.payload.revision);
    if (rev !== undefined && startedRevs.includes(rev)) wake?.();
  };
  RED.events.on('runtime-event', listener);
  try {
    const done = new Promise<void>((resolve) => (wake = resolve));
    const credentials: Record<string, unknown> = {};
    const nodes = flow.map(({ credentials: creds, ...rest }) => {
      if (creds) credentials[rest.id] = creds;
      // a node on a tab without a position is taken for a config node
      return rest.z !== undefined && rest.x === undefined ? { x: 100, y: 100, ...rest } : rest;
    });
    rev = (
      (await RED.runtime.flows.setFlows({ flows: { flows: nodes, credentials }, deploymentType: 'full' })) as { rev: string }
    ).rev;
    if (!startedRevs.includes(rev)) await done;
    startedRevs = [];
  } finally {
    RED.events.removeListener('runtime-event', listener);
  }
}

/** An lh-server config node aimed at one simulator, credentials inline (stripped into the credential store on deploy). */
export function serverNode(id: string, baseUrl: string, instrumentUrl = '', extra: Record<string, unknown> = {}): FlowNode {
  return {
    id,
    type: 'lh-server',
    name: `instrument ${id}`,
    baseUrl,
    instrumentUrl,
    clientKey: 'bench',
    tls: '',
    simulatorCa: instrumentUrl !== '',
    timeout: 10000,
    credentials: { username: 'admin', password: 'labwire' },
    ...extra,
  };
}

/** A tab to put the nodes on. */
export function tab(id: string): FlowNode {
  return { id, type: 'tab', label: id, disabled: false, info: '' };
}

/** A terminal node whose only job is to be observed with onInput (an inactive debug node does nothing itself). */
export function sink(id: string, z: string): FlowNode {
  return { id, type: 'debug', z, active: false, tosidebar: false, console: false, tostatus: false, complete: 'false', wires: [] };
}
