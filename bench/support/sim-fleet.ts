/** The benchmark's side of the simulator child process. */
import { ChildProcess, fork } from 'child_process';
import path from 'path';
import type { SimulatorOptions } from '../../src/simulator';
import type { ChildCommand, ChildReply, InjectionRecord, LogEntry, SimAddress } from './sim-protocol';

type Distribute<T> = T extends unknown ? Omit<T, 'cmd'> : never;
type ArgsOf<C extends ChildCommand['cmd']> = Distribute<Extract<ChildCommand, { cmd: C }>>;

export class SimFleet {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  addresses: SimAddress[] = [];

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

  /** Forks the child (ts-node, transpile only) and starts `count` simulators in it, each on its own random ports. */
  static async start(count: number, options: SimulatorOptions = {}): Promise<SimFleet> {
    const child = fork(path.join(__dirname, 'sim-child.ts'), [], {
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`simulator child exited early (${String(code)})`)));
    });
    const fleet = new SimFleet(child);
    fleet.addresses = (await fleet.call('start', { count, options: { host: '127.0.0.1', ...options } })) as SimAddress[];
    return fleet;
  }

  call<C extends ChildCommand['cmd']>(cmd: C, args: ArgsOf<C>): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, cmd, ...args });
    });
  }

  setFaults(index: number, faults: Record<string, unknown>): Promise<unknown> {
    return this.call('setFaults', { index, faults });
  }

  async log(index = 0): Promise<LogEntry[]> {
    return (await this.call('log', { index })) as LogEntry[];
  }

  async logs(): Promise<LogEntry[][]> {
    return (await this.call('logs', {})) as LogEntry[][];
  }

  clearLog(): Promise<unknown> {
    return this.call('clearLog', {});
  }

  async counters(index = 0): Promise<{ logins: number; renewals: number; failedLogins: number }> {
    return (await this.call('counters', { index })) as { logins: number; renewals: number; failedLogins: number };
  }

  /** Injects errors at Poisson times: alternately A and B, or only the `kinds` given. */
  inject(index: number, ratePerSec: number, durationMs: number, holdMs: number, kinds?: ('A' | 'B')[]): Promise<unknown> {
    return this.call('inject', { index, ratePerSec, durationMs, holdMs, kinds });
  }

  /** Drops every websocket of these simulators (as a network failure would); resolves with how many. */
  async dropSockets(indexes: number[]): Promise<number> {
    return (await this.call('dropSockets', { indexes })) as number;
  }

  /** Restarts one simulator (state kept) after `downtimeMs`; no error is injected into it while it is down. */
  restart(index: number, downtimeMs: number): Promise<unknown> {
    return this.call('restart', { index, downtimeMs });
  }

  /** Open instincterrors connections per simulator. */
  async socketCounts(): Promise<number[]> {
    return (await this.call('socketCounts', {})) as number[];
  }

  async injections(): Promise<InjectionRecord[]> {
    return (await this.call('injections', {})) as InjectionRecord[];
  }

  async stop(): Promise<void> {
    try {
      await this.call('stop', {});
    } finally {
      this.child.disconnect();
      await new Promise<void>((resolve) => (this.child.exitCode !== null ? resolve() : this.child.once('exit', () => resolve())));
    }
  }
}
