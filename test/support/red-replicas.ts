/**
 * Real Node-RED processes (replicas) running identical flows, each with its own user dir and editor port, and a
 * collector: an HTTP endpoint in the test process that the flows POST every msg of interest to, so the test sees
 * what all replicas emitted together. A replica can be killed (SIGKILL), paused (SIGSTOP), resumed and restarted.
 */
import { ChildProcess, spawn } from 'child_process';
import fs from 'fs';
import http from 'http';
import os from 'os';
import path from 'path';

import type Redis from 'ioredis';
import type { AddressInfo } from 'net';

import { trimBase } from '../../src/client';
import { CoordinationKeys } from '../../src/coordination/keys';
import type { Simulator } from '../../src/simulator';
import { startSimulator, USER } from './runtime';

/** A Catch node for `scope` on tab `z` and a function node that logs each caught error as `CAUGHT <message>`. */
export function caughtToLog(scope: string[], z = 'tab'): FlowNode[] {
  return [
    { id: 'c', type: 'catch', z, scope, wires: [['w']] },
    { id: 'w', type: 'function', z, outputs: 1, func: "node.warn('CAUGHT ' + msg.error.message); return null;", wires: [] },
  ];
}

/** The credentials of watchFlows' lh-server nodes (`server-<id>`), the simulator's user for each. */
export function credentialsFor(instruments: { id: string }[]): Record<string, Record<string, string>> {
  return Object.fromEntries(instruments.map((i) => [`server-${i.id}`, { username: USER.username, password: USER.password }]));
}

/** The running replica that holds the lease of an instrument (its A and B URLs), read from Redis; undefined if none. */
export async function leaseHolder(
  redis: Redis,
  prefix: string,
  urls: { baseUrl: string; instrumentUrl?: string },
  replicas: readonly Replica[],
): Promise<Replica | undefined> {
  const key = new CoordinationKeys(prefix).instrument(
    `${trimBase(urls.baseUrl)}|${urls.instrumentUrl ? trimBase(urls.instrumentUrl) : ''}`,
  );
  const value = await redis.get(key.lease);
  return value ? replicas.find((r) => r.running && value.includes(`/${String(r.pid)}-`)) : undefined;
}

const root = path.resolve(__dirname, '..', '..');
const redJs = path.join(path.dirname(require.resolve('node-red/package.json')), 'red.js');

export type FlowNode = Record<string, unknown> & { id: string; type: string };

export interface Collected {
  kind: string;
  id: string;
  replica: string;
  lost?: string;
  /** msg.redeliveryReason: the msg was sent again and may have come before (see src/coordination/error-gate.ts) */
  redelivered?: string;
  at: number;
}

/** Receives the replicas' POSTs (JSON bodies) and keeps them in order of arrival. */
export class Collector {
  readonly events: Collected[] = [];
  private server?: http.Server;
  url = '';
  private listeners: (() => void)[] = [];

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        try {
          const parsed = JSON.parse(body) as Omit<Collected, 'at'>;
          this.events.push({ ...parsed, at: Date.now() });
        } catch {
          // not ours
        }
        res.end('ok');
        for (const l of this.listeners.splice(0)) l();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/collect`;
  }

  count(kind: string, id: string): number {
    return this.events.filter((e) => e.kind === kind && e.id === id).length;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** The flows the coordination tests run on every replica: one poll node per simulated instrument, msgs to the collector. */
export function watchFlows(options: {
  redisUrl: string;
  prefix: string;
  leaseSeconds: number;
  instruments: { id: string; baseUrl: string; instrumentUrl?: string }[];
  collectorUrl: string;
  interval?: number;
  /** a policy node behind each poll: semi-automatic "Retry" after `delay` s */
  policyDelay?: number;
  /** an lh-run-watch node per instrument (`watch-<id>`): its state changes and finished runs go to the collector */
  runWatch?: boolean;
  /** with runWatch: its connection msgs (output 4, kind `connection`, id offline/online) and its status changes
   * (a status node, kind `status`, id the status text) go to the collector too */
  runWatchConnection?: boolean;
  /** the error polls' connection msgs (output 3) go to the collector (kind `connection`, id offline/online) */
  pollConnection?: boolean;
  /** more nodes on every replica (e.g. lh-state → mqtt out), appended as given */
  extra?: FlowNode[];
}): FlowNode[] {
  const flows: FlowNode[] = [
    { id: 'tab', type: 'tab', label: 'coordination test' },
    { id: 'coord', type: 'lh-coordination', url: options.redisUrl, prefix: options.prefix, leaseSeconds: options.leaseSeconds },
    {
      id: 'post',
      type: 'http request',
      z: 'tab',
      method: 'POST',
      ret: 'txt',
      url: options.collectorUrl,
      wires: [[]],
    },
  ];
  for (const kind of ['raised', 'resolved', 'answered']) {
    flows.push({
      id: `to-${kind}`,
      type: 'function',
      z: 'tab',
      func: `msg.payload = { kind: '${kind}', id: String(msg.errorId ?? msg.uuid), source: msg.source, replica: env.get('LH_REPLICA'), lost: msg.coordination, redelivered: msg.redeliveryReason }; msg.headers = { 'content-type': 'application/json' }; return msg;`,
      outputs: 1,
      wires: [['post']],
    });
  }
  if (options.runWatchConnection || options.pollConnection) {
    flows.push({
      id: 'to-connection',
      type: 'function',
      z: 'tab',
      func: `msg.payload = { kind: 'connection', id: msg.event, replica: env.get('LH_REPLICA'), lost: msg.coordination, redelivered: msg.redeliveryReason }; msg.headers = { 'content-type': 'application/json' }; return msg;`,
      outputs: 1,
      wires: [['post']],
    });
  }
  if (options.runWatch) {
    // a state change is collected as `<previousState>><state>`, a finished run as its protocol and start time
    const ids: Record<string, string> = {
      state: "String(msg.previousState) + '>' + msg.state",
      finished: "msg.protocolName + '@' + msg.payload.startTime",
    };
    if (options.runWatchConnection) ids.status = 'String(msg.status.text)';
    for (const [kind, id] of Object.entries(ids)) {
      flows.push({
        id: `to-${kind}`,
        type: 'function',
        z: 'tab',
        func: `msg.payload = { kind: '${kind}', id: ${id}, replica: env.get('LH_REPLICA'), lost: msg.coordination, redelivered: msg.redeliveryReason }; msg.headers = { 'content-type': 'application/json' }; return msg;`,
        outputs: 1,
        wires: [['post']],
      });
    }
  }
  for (const inst of options.instruments) {
    if (options.runWatch) {
      flows.push({
        id: `watch-${inst.id}`,
        type: 'lh-run-watch',
        z: 'tab',
        server: `server-${inst.id}`,
        interval: options.interval ?? 0.5,
        offlineAfter: 3,
        progressInterval: 0,
        wires: [['to-state'], ['to-finished'], [], options.runWatchConnection ? ['to-connection'] : []],
      });
      if (options.runWatchConnection) {
        flows.push({ id: `status-${inst.id}`, type: 'status', z: 'tab', scope: [`watch-${inst.id}`], wires: [['to-status']] });
      }
    }
    flows.push(
      {
        id: `server-${inst.id}`,
        type: 'lh-server',
        baseUrl: inst.baseUrl,
        instrumentUrl: inst.instrumentUrl ?? '',
        simulatorCa: inst.instrumentUrl !== undefined,
        timeout: 3000,
        coordination: 'coord',
      },
      {
        id: `poll-${inst.id}`,
        type: 'lh-error-poll',
        z: 'tab',
        server: `server-${inst.id}`,
        source: inst.instrumentUrl ? 'both' : 'A',
        interval: options.interval ?? 0.5,
        listen: false,
        offlineAfter: 3,
        wires:
          options.policyDelay === undefined
            ? [['to-raised'], ['to-resolved'], options.pollConnection ? ['to-connection'] : []]
            : [
                ['to-raised', `policy-${inst.id}`],
                ['to-resolved', `policy-${inst.id}`],
                options.pollConnection ? ['to-connection'] : [],
              ],
      },
    );
    if (options.policyDelay !== undefined) {
      flows.push({
        id: `policy-${inst.id}`,
        type: 'lh-error-policy',
        z: 'tab',
        server: `server-${inst.id}`,
        rules: [
          {
            source: 'any',
            minSeverity: '',
            pattern: '',
            code: '',
            mode: 'semi-automatic',
            answer: 'Retry',
            delay: options.policyDelay,
          },
        ],
        by: 'policy',
        wires: [[], ['to-answered'], []],
      });
    }
  }
  flows.push(...(options.extra ?? []));
  return flows;
}

/**
 * watchFlows with an lh-register-handler of instrument i1 (interface B) that registers the error handler at start,
 * under one client key for every replica (the handler is the instrument's, shared by the group).
 */
export function registerHandlerFlows(options: Parameters<typeof watchFlows>[0]): FlowNode[] {
  const flows = watchFlows(options);
  const server = flows.find((n) => n.id === 'server-i1');
  if (!server) throw new Error('no lh-server of instrument i1');
  server.clientKey = 'nodered1';
  flows.push({
    id: 'reg',
    type: 'lh-register-handler',
    z: 'tab',
    server: 'server-i1',
    operation: 'check',
    autoRegister: true,
    wires: [[]],
  });
  return flows;
}

/**
 * watchFlows with an answer page behind instrument i1's poll: each link made goes to the collector
 * (`{kind: 'linked', id, replica, url}`), and with `audit` each audit record of an answer too
 * (`{kind: 'audit', id, replica, outcome}`).
 */
export function answerPageFlows(options: Parameters<typeof watchFlows>[0], audit = false): FlowNode[] {
  const flows = watchFlows(options);
  const poll = flows.find((n) => n.id === 'poll-i1');
  if (!poll) throw new Error('no poll node');
  poll.wires = [['page'], [], []];
  const toCollector = (id: string, payload: string): FlowNode => ({
    id,
    type: 'function',
    z: 'tab',
    func: `msg.payload = ${payload}; msg.headers = { 'content-type': 'application/json' }; return msg;`,
    outputs: 1,
    wires: [['post']],
  });
  flows.push(
    {
      id: 'page',
      type: 'lh-answer-page',
      z: 'tab',
      server: 'server-i1',
      path: '/lh/answer',
      publicUrlType: 'str',
      publicUrl: 'http://127.0.0.1:9',
      expiryHours: 1,
      wires: [['to-linked'], audit ? ['to-audit'] : []],
    },
    toCollector('to-linked', "{ kind: 'linked', id: String(msg.errorId), replica: env.get('LH_REPLICA'), url: msg.answerUrl }"),
  );
  if (audit) {
    flows.push(
      toCollector(
        'to-audit',
        "{ kind: 'audit', id: String(msg.payload.errorKey), replica: env.get('LH_REPLICA'), outcome: msg.payload.outcome }",
      ),
    );
  }
  return flows;
}

/** One Node-RED process. */
export class Replica {
  private proc?: ChildProcess;
  private output = '';
  readonly userDir: string;

  constructor(
    readonly name: string,
    private readonly flows: FlowNode[],
    private readonly credentials: Record<string, Record<string, string>>,
    /** more settings.js entries (e.g. lhAudit) */
    private readonly extraSettings: Record<string, unknown> = {},
  ) {
    this.userDir = fs.mkdtempSync(path.join(os.tmpdir(), `lh-replica-${name}-`));
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  get log(): string {
    return this.output;
  }

  /** The port its HTTP server (http nodes, answer pages) listens on, from its start log (the latest start). */
  get httpPort(): number {
    const all = [...this.output.matchAll(/Server now running at https?:\/\/[^:/]+:(\d+)/g)];
    const last = all[all.length - 1];
    if (!last) throw new Error(`replica ${this.name} has not said where it listens`);
    return Number(last[1]);
  }

  /** Starts it and resolves once its flows run. */
  async start(): Promise<void> {
    fs.writeFileSync(path.join(this.userDir, 'flows.json'), JSON.stringify(this.flows));
    fs.writeFileSync(path.join(this.userDir, 'flows_cred.json'), JSON.stringify(this.credentials));
    const settings = {
      uiHost: '127.0.0.1',
      uiPort: 0,
      userDir: this.userDir,
      flowFile: 'flows.json',
      nodesDir: [root],
      credentialSecret: false,
      httpAdminRoot: false,
      logging: { console: { level: process.env.LH_REPLICA_LOG || 'info', metrics: false, audit: false } },
      editorTheme: { tours: false },
      ...this.extraSettings,
    };
    const settingsFile = path.join(this.userDir, 'settings.js');
    fs.writeFileSync(settingsFile, `module.exports = ${JSON.stringify(settings, null, 2)};\n`);
    const proc = spawn(process.execPath, [redJs, '--settings', settingsFile, '--userDir', this.userDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LH_REPLICA: this.name },
    });
    this.proc = proc;
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        const text = chunk.toString();
        this.output += text;
        seen += text;
        if (/Started flows/.test(seen) && /Server now running/.test(seen)) resolve();
      };
      proc.stdout?.on('data', onData);
      proc.stderr?.on('data', onData);
      proc.once('exit', (code, signal) => reject(new Error(`replica ${this.name} exited (${String(code ?? signal)}):\n${seen}`)));
    });
  }

  /** SIGKILL: no close handler runs, the leases it held expire on their own. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL', true);
  }

  pause(): void {
    this.proc?.kill('SIGSTOP');
  }

  resume(): void {
    this.proc?.kill('SIGCONT');
  }

  /** SIGTERM: Node-RED closes its nodes (leases released), then exits. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM', true);
  }

  private async signal(signal: NodeJS.Signals, wait: boolean): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGCONT');
    proc.kill(signal);
    if (wait) await exited;
  }

  async destroy(): Promise<void> {
    await this.signal('SIGKILL', true);
    fs.rmSync(this.userDir, { recursive: true, force: true });
  }
}

/** What a pair's watch flows add to the Redis, prefix, lease, instrument and collector the pair gives them. */
export type PairFlowOptions = Omit<
  Parameters<typeof watchFlows>[0],
  'redisUrl' | 'prefix' | 'leaseSeconds' | 'instruments' | 'collectorUrl'
>;

/** Two replicas of the watch flows for one simulated instrument, as a suite's fixture (see useReplicaPair). */
export interface ReplicaPair {
  collector: Collector;
  sim: Simulator;
  /** r1 and r2 once started (empty before) */
  replicas: Replica[];
  /** Starts r1 and r2 on the simulator with the pair's Redis, lease and prefix (`prefix` for a test that wants its own). */
  start(options?: PairFlowOptions, settings?: Record<string, unknown>, prefix?: string): Promise<void>;
  /** The replica holding the instrument's lease now, if any. */
  holder(): Promise<Replica | undefined>;
}

/**
 * Registers the hooks of a describe block whose tests run two real replicas against one simulator: a fresh collector
 * and simulator before each test; after it the replicas' logs when it failed, then replicas, simulator and collector
 * stopped.
 */
export function useReplicaPair(
  db: { harness: { url: string }; redis: Redis },
  prefix: string,
  leaseSeconds: number,
): ReplicaPair {
  let started = prefix;
  const pair: ReplicaPair = {
    collector: undefined as unknown as Collector,
    sim: undefined as unknown as Simulator,
    replicas: [],
    async start(options = {}, settings, ownPrefix = prefix) {
      started = ownPrefix;
      const instruments = [{ id: 'i1', baseUrl: pair.sim.baseUrl }];
      const flows = watchFlows({
        redisUrl: db.harness.url,
        prefix: ownPrefix,
        leaseSeconds,
        instruments,
        collectorUrl: pair.collector.url,
        ...options,
      });
      for (const name of ['r1', 'r2']) pair.replicas.push(new Replica(name, flows, credentialsFor(instruments), settings));
      await Promise.all(pair.replicas.map((r) => r.start()));
    },
    holder: () => leaseHolder(db.redis, started, { baseUrl: pair.sim.baseUrl }, pair.replicas),
  };
  beforeEach(async function () {
    pair.collector = new Collector();
    await pair.collector.start();
    pair.sim = await startSimulator();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      for (const r of pair.replicas) console.log(`--- ${r.name} log:\n${r.log.slice(-3000)}`);
    for (const r of pair.replicas.splice(0)) await r.destroy();
    await pair.sim.stop();
    await pair.collector.stop();
  });
  return pair;
}

/** The replicas, simulators and msg collector of one test, and its coordination prefix (see useReplicaFleet). */
export interface ReplicaFleet {
  collector: Collector;
  sims: Simulator[];
  replicas: Replica[];
  prefix: string;
}

/**
 * Registers the hooks of a describe block whose tests start their own replicas and simulators (pushed to `replicas`,
 * `sims`): a fresh collector and prefix (`lh-<name>-<pid>-<n>`) before each test; after it, the replicas' logs when it
 * failed, then every replica destroyed and every simulator stopped.
 */
export function useReplicaFleet(name: string): ReplicaFleet {
  const fleet = { sims: [], replicas: [], prefix: '' } as unknown as ReplicaFleet;
  let run = 0;
  beforeEach(async function () {
    fleet.prefix = `lh-${name}-${process.pid}-${++run}`;
    fleet.collector = new Collector();
    await fleet.collector.start();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      for (const r of fleet.replicas) console.log(`--- ${r.name} log:\n${r.log.slice(-3000)}`);
    for (const r of fleet.replicas.splice(0)) await r.destroy();
    for (const s of fleet.sims.splice(0)) await s.stop();
    await fleet.collector.stop();
  });
  return fleet;
}
