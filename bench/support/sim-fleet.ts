/**
 * The benchmark's side of the simulator child processes. A fleet is spread over several children (at most
 * LH_BENCH_SIMS_PER_CHILD simulators each, 250 by default), so that the simulators' own CPU is not the bottleneck of
 * a fleet benchmark and never counts against the Node-RED process under measurement; `usage()` reports it apart.
 * Simulators are numbered across the fleet (0 .. count-1) whatever child holds them.
 */
import { ChildProcess, fork } from 'child_process';
import path from 'path';

import type { SimulatorOptions } from '../../src/simulator';
import type { ChildCommand, ChildReply, ChildUsage, InjectionKind, InjectionRecord, LogEntry, SimAddress } from './sim-protocol';

type Distribute<T> = T extends unknown ? Omit<T, 'cmd'> : never;
type ArgsOf<C extends ChildCommand['cmd']> = Distribute<Extract<ChildCommand, { cmd: C }>>;

/** Simulators per child process unless LH_BENCH_SIMS_PER_CHILD says otherwise. */
export const SIMS_PER_CHILD = Math.max(1, Number(process.env.LH_BENCH_SIMS_PER_CHILD ?? 250) || 250);

/** One child process and its IPC calls. */
class SimChild {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: ChildReply) => {
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      if (reply.error !== undefined) w.reject(new Error(`simulator child: ${reply.error}`));
      else w.resolve(reply.result);
    });
    child.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`simulator child exited (${String(code)})`));
      this.waiting.clear();
    });
  }

  /** Forks a child (ts-node, transpile only) and waits until it is ready. */
  static async fork(): Promise<SimChild> {
    const child = fork(path.join(__dirname, 'sim-child.ts'), [], {
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`simulator child exited early (${String(code)})`)));
    });
    return new SimChild(child);
  }

  call<C extends ChildCommand['cmd']>(cmd: C, args: ArgsOf<C>): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, cmd, ...args });
    });
  }

  async close(): Promise<void> {
    this.child.disconnect();
    await new Promise<void>((resolve) => (this.child.exitCode !== null ? resolve() : this.child.once('exit', () => resolve())));
  }
}

/** The simulators' CPU and event-loop delay since the last mark, summed (CPU) or worst (delay) over the children. */
export interface FleetUsage {
  children: number;
  /** CPU of all children, as a share of one core (1 = one core busy) */
  cpuShare: number;
  /** the busiest child's share of one core */
  busiestChildShare: number;
  /** event-loop delay of the children, ms: the worst p99 and max over them */
  loopDelayMs: { p99: number; max: number };
}

export class SimFleet {
  addresses: SimAddress[] = [];

  /** `children[c]` holds simulators `offsets[c]` .. `offsets[c] + counts[c] - 1` */
  private constructor(
    private readonly children: SimChild[],
    private readonly offsets: number[],
  ) {}

  /** Starts `count` simulators, each on its own random ports, over ⌈count / SIMS_PER_CHILD⌉ child processes. */
  static async start(count: number, options: SimulatorOptions = {}, perChild = SIMS_PER_CHILD): Promise<SimFleet> {
    const childCount = Math.max(1, Math.ceil(count / perChild));
    const counts = Array.from({ length: childCount }, (_, c) => Math.min(perChild, count - c * perChild));
    const children = await Promise.all(counts.map(() => SimChild.fork()));
    const offsets = counts.map((_, c) => c * perChild);
    const fleet = new SimFleet(children, offsets);
    const parts = await Promise.all(
      children.map((child, c) => child.call('start', { count: counts[c], options: { host: '127.0.0.1', ...options } })),
    );
    fleet.addresses = (parts as SimAddress[][]).flat();
    return fleet;
  }

  get childCount(): number {
    return this.children.length;
  }

  /** The child holding simulator `index`, and its index there. */
  private locate(index: number): { child: SimChild; local: number } {
    let c = this.offsets.length - 1;
    while (c > 0 && this.offsets[c] > index) c--;
    return { child: this.children[c], local: index - this.offsets[c] };
  }

  private async all<T>(cmd: ChildCommand['cmd'] & ('logs' | 'socketCounts' | 'injections')): Promise<T[]> {
    const parts = await Promise.all(this.children.map((child) => child.call(cmd, {})));
    return (parts as T[][]).flat();
  }

  setFaults(index: number, faults: Record<string, unknown>): Promise<unknown> {
    const { child, local } = this.locate(index);
    return child.call('setFaults', { index: local, faults });
  }

  async log(index = 0): Promise<LogEntry[]> {
    const { child, local } = this.locate(index);
    return (await child.call('log', { index: local })) as LogEntry[];
  }

  logs(): Promise<LogEntry[][]> {
    return this.all<LogEntry[]>('logs');
  }

  async clearLog(): Promise<unknown> {
    return Promise.all(this.children.map((child) => child.call('clearLog', {})));
  }

  async counters(index = 0): Promise<{ logins: number; renewals: number; failedLogins: number }> {
    const { child, local } = this.locate(index);
    return (await child.call('counters', { index: local })) as { logins: number; renewals: number; failedLogins: number };
  }

  /**
   * Injects errors at Poisson times: alternately A and B, or only the `kinds` given; with `burst`, the first one
   * within 200 ms (every instrument at once when the whole fleet is asked).
   */
  inject(
    index: number,
    ratePerSec: number,
    durationMs: number,
    holdMs: number,
    kinds?: InjectionKind[],
    burst = false,
  ): Promise<unknown> {
    const { child, local } = this.locate(index);
    return child.call('inject', { index: local, ratePerSec, durationMs, holdMs, kinds, burst });
  }

  /** Drops every websocket of these simulators (as a network failure would); resolves with how many. */
  async dropSockets(indexes: number[]): Promise<number> {
    const byChild = new Map<SimChild, number[]>();
    for (const i of indexes) {
      const { child, local } = this.locate(i);
      byChild.set(child, [...(byChild.get(child) ?? []), local]);
    }
    const counts = await Promise.all([...byChild].map(([child, locals]) => child.call('dropSockets', { indexes: locals })));
    return (counts as number[]).reduce((a, b) => a + b, 0);
  }

  /** Pushes `count` frames at once on one simulator's errors socket; resolves with the time the last was sent. */
  async flood(index: number, count: number): Promise<number> {
    const { child, local } = this.locate(index);
    return (await child.call('flood', { index: local, count })) as number;
  }

  /** Restarts one simulator (state kept) after `downtimeMs`; no error is injected into it while it is down. */
  restart(index: number, downtimeMs: number): Promise<unknown> {
    const { child, local } = this.locate(index);
    return child.call('restart', { index: local, downtimeMs });
  }

  /** Open instincterrors connections per simulator. */
  socketCounts(): Promise<number[]> {
    return this.all<number>('socketCounts');
  }

  injections(): Promise<InjectionRecord[]> {
    return this.all<InjectionRecord>('injections');
  }

  /** Starts measuring the children's CPU and event-loop delay afresh. */
  async markUsage(): Promise<void> {
    await Promise.all(this.children.map((child) => child.call('usage', { reset: true })));
  }

  /** The children's CPU and event-loop delay since `markUsage()`. */
  async usage(): Promise<FleetUsage> {
    const parts = (await Promise.all(this.children.map((child) => child.call('usage', { reset: false })))) as ChildUsage[];
    const shares = parts.map((p) => (p.cpuUserUs + p.cpuSystemUs) / p.elapsedUs);
    return {
      children: parts.length,
      cpuShare: shares.reduce((a, b) => a + b, 0),
      busiestChildShare: Math.max(...shares),
      loopDelayMs: { p99: Math.max(...parts.map((p) => p.loopDelayP99Ms)), max: Math.max(...parts.map((p) => p.loopDelayMaxMs)) },
    };
  }

  async stop(): Promise<void> {
    try {
      await Promise.all(this.children.map((child) => child.call('stop', {})));
    } finally {
      await Promise.all(this.children.map((child) => child.close()));
    }
  }
}
