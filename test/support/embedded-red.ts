/**
 * A real Node-RED runtime embedded in the test process, with its admin API and HTTP-in endpoints on a random port,
 * loading this package the way a user's Node-RED does (nodesDir = the repository, so package.json `node-red.nodes`).
 *
 * Node-RED's runtime is a singleton per process and may be started only once: `startEmbeddedRed()` starts it on the
 * first call and returns the same instance afterwards; `stopEmbeddedRed()` stops it for good. Tests redeploy flows
 * between cases (`deploy`), and deploy an empty flow when they are done.
 */
import fs from 'fs';
import http from 'http';
import os from 'os';
import path from 'path';

import type { AddressInfo } from 'net';

import { exampleFile } from './example-files';
import { requestText, TextResponse } from './http-text';

const root = path.resolve(__dirname, '..', '..');

export type FlowNode = Record<string, unknown> & { id: string; type: string };
export type Credentials = Record<string, Record<string, string>>;

/** What a debug node publishes to the editor (its `msg` is already encoded for the sidebar). */
export interface DebugMessage {
  id: string;
  name?: string;
  topic?: string;
  property?: string;
  msg: unknown;
  format?: string;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, next: (err?: unknown) => void) => void;

interface CommsEvent {
  topic: string;
  data: unknown;
}
interface NodeStatusEvent {
  id: string;
  status?: { text?: unknown };
}
interface FlowsStartedEvent {
  config?: { rev?: string };
}

/* Node-RED boundary: the module has no types. Only what these tests use. */
interface NodeRedModule {
  init(server: http.Server, settings: Record<string, unknown>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  httpAdmin: Handler;
  httpNode: Handler;
  events: {
    on(event: 'comms', l: (e: CommsEvent) => void): void;
    on(event: 'flows:started', l: (e: FlowsStartedEvent) => void): void;
    on(event: 'node-status', l: (e: NodeStatusEvent) => void): void;
    off(event: 'comms', l: (e: CommsEvent) => void): void;
    off(event: 'flows:started', l: (e: FlowsStartedEvent) => void): void;
    off(event: 'node-status', l: (e: NodeStatusEvent) => void): void;
  };
  runtime: {
    flows: {
      setFlows(opts: {
        flows: { flows: FlowNode[]; credentials?: Credentials };
        deploymentType?: string;
      }): Promise<{ rev: string }>;
    };
  };
}

export interface EmbeddedRed {
  /** http://127.0.0.1:port (admin API at /, HTTP-in endpoints at /) */
  url: string;
  userDir: string;
  /** Replaces all flows (a full deploy) and resolves when they have started. */
  deploy(flows: FlowNode[], credentials?: Credentials): Promise<void>;
  /** The next message the debug node `id` shows, optionally the first one `match` accepts. */
  nextDebug(id: string, match?: (m: DebugMessage) => boolean, timeoutMs?: number): Promise<DebugMessage>;
  /** Every message debug node `id` shows from now on. */
  collectDebug(id: string): DebugMessage[];
  /** The text of every status node `id` shows from now on (as the editor gets it), in order. */
  collectStatus(id: string): string[];
  /** Presses an inject node's button, as the editor does (POST /inject/:id). */
  inject(id: string): Promise<void>;
  /** A request to this Node-RED (admin API or an http-in endpoint). */
  request(method: string, urlPath: string, body?: unknown): Promise<{ status: number; text: string }>;
}

let started: Promise<EmbeddedRed> | undefined;
let stop: (() => Promise<void>) | undefined;

export function request(method: string, url: string, body?: unknown): Promise<TextResponse> {
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return requestText(
    url,
    {
      method,
      agent: false,
      headers: data
        ? { 'Content-Type': 'application/json', 'Content-Length': data.length, 'Node-RED-Deployment-Type': 'full' }
        : {},
    },
    data,
  );
}

async function start(): Promise<EmbeddedRed> {
  const RED = require('node-red') as NodeRedModule;
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-e2e-red-'));
  const server = http.createServer((req, res) =>
    RED.httpAdmin(req, res, () =>
      RED.httpNode(req, res, () => {
        res.statusCode = 404;
        res.end();
      }),
    ),
  );
  RED.init(server, {
    userDir,
    flowFile: 'flows.json',
    nodesDir: [root],
    uiHost: '127.0.0.1',
    httpAdminRoot: '/',
    httpNodeRoot: '/',
    credentialSecret: false,
    // errors only, as for the node tests (test/support/runtime.ts): this init sets the level for the whole process
    logging: { console: { level: process.env.LH_E2E_LOG ?? process.env.LH_TEST_LOG ?? 'error', metrics: false, audit: false } },
    editorTheme: { tours: false },
    // no default flow file: an empty runtime until a test deploys
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // The runtime starts flows after a deploy has returned: its "flows:started" event names the revision it started.
  const startedRevs = new Set<string>();
  const revWaiters = new Set<() => void>();
  const onFlowsStarted = (e: FlowsStartedEvent): void => {
    startedRevs.add(e.config?.rev ?? '');
    for (const w of [...revWaiters]) w();
  };
  const flowsStarted = (test: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!test()) return;
        revWaiters.delete(check);
        resolve();
      };
      revWaiters.add(check);
      check();
    });
  RED.events.on('flows:started', onFlowsStarted);
  await RED.start();
  await flowsStarted(() => startedRevs.size > 0);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const debugListeners = new Set<(m: DebugMessage) => void>();
  const statusListeners = new Set<(id: string, text: string) => void>();
  const onComms = (e: CommsEvent): void => {
    if (e.topic !== 'debug') return;
    for (const l of [...debugListeners]) l(e.data as DebugMessage);
  };
  RED.events.on('comms', onComms);
  // what the editor shows under a node (the runtime's comms publish it as status/<id>)
  const onStatus = (e: NodeStatusEvent): void => {
    for (const l of [...statusListeners]) l(e.id, String(e.status?.text ?? ''));
  };
  RED.events.on('node-status', onStatus);

  stop = async () => {
    RED.events.off('comms', onComms);
    RED.events.off('node-status', onStatus);
    RED.events.off('flows:started', onFlowsStarted);
    await RED.stop();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    fs.rmSync(userDir, { recursive: true, force: true });
  };

  return {
    url,
    userDir,
    async deploy(flows, credentials) {
      startedRevs.clear();
      const { rev } = await RED.runtime.flows.setFlows({
        flows: { flows, credentials: credentials ?? {} },
        deploymentType: 'full',
      });
      await flowsStarted(() => startedRevs.has(rev));
    },
    nextDebug(id, match = () => true, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const listener = (m: DebugMessage): void => {
          if (m.id !== id || !match(m)) return;
          clearTimeout(timer);
          debugListeners.delete(listener);
          resolve(m);
        };
        const timer = setTimeout(() => {
          debugListeners.delete(listener);
          reject(new Error(`debug node ${id} showed nothing within ${timeoutMs} ms`));
        }, timeoutMs);
        debugListeners.add(listener);
      });
    },
    collectDebug(id) {
      const seen: DebugMessage[] = [];
      debugListeners.add((m) => {
        if (m.id === id) seen.push(m);
      });
      return seen;
    },
    collectStatus(id) {
      const seen: string[] = [];
      statusListeners.add((of, text) => {
        if (of === id) seen.push(text);
      });
      return seen;
    },
    async inject(id) {
      const res = await request('POST', `${url}/inject/${encodeURIComponent(id)}`);
      if (res.status !== 200) throw new Error(`inject ${id}: ${res.status} ${res.text}`);
    },
    request(method, urlPath, body) {
      return request(method, `${url}${urlPath}`, body);
    },
  };
}

/** The one embedded Node-RED of this process (started on the first call). */
export function startEmbeddedRed(): Promise<EmbeddedRed> {
  started ??= start();
  return started;
}

/** Stops it (for good: Node-RED cannot start again in this process). */
export async function stopEmbeddedRed(): Promise<void> {
  if (!started) return;
  await started.catch(() => undefined);
  await stop?.();
  stop = undefined;
}

/** The example flows of the package, as users import them. */
export function loadExample(prefix: string): FlowNode[] {
  return JSON.parse(fs.readFileSync(exampleFile(prefix).full, 'utf8')) as FlowNode[];
}

/** Polls `check` until it returns a value other than undefined/false; for states that raise no event. */
export async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
