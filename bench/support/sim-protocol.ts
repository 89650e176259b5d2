/** The IPC protocol between a benchmark and its simulator child process. */
import type { SimulatorOptions } from '../../src/simulator';

export type ChildCommand =
  | { cmd: 'start'; count: number; options: SimulatorOptions }
  | { cmd: 'setFaults'; index: number; faults: Record<string, unknown> }
  | { cmd: 'log'; index: number }
  | { cmd: 'logs' }
  | { cmd: 'clearLog' }
  | { cmd: 'counters'; index: number }
  | {
      cmd: 'inject';
      index: number;
      ratePerSec: number;
      durationMs: number;
      holdMs: number;
      kinds?: InjectionKind[];
      /** the first error within 200 ms instead of at a Poisson time */
      burst?: boolean;
    }
  | { cmd: 'dropSockets'; indexes: number[] }
  /** `count` RuntimeErrorResolved frames of ids nobody knows, on one simulator's errors socket, in one go */
  | { cmd: 'flood'; index: number; count: number }
  | { cmd: 'restart'; index: number; downtimeMs: number }
  | { cmd: 'socketCounts' }
  | { cmd: 'injections' }
  | { cmd: 'usage'; reset: boolean }
  | { cmd: 'stop' };

/** A child's CPU (process.cpuUsage) and event-loop delay (perf_hooks) since its last `usage` with reset. */
export interface ChildUsage {
  cpuUserUs: number;
  cpuSystemUs: number;
  elapsedUs: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

export interface ChildReply {
  id: number;
  result?: unknown;
  error?: string;
}

export interface SimAddress {
  baseUrl: string;
  instrumentUrl: string;
}

/** One request as the simulator logged it (compacted for IPC). */
export interface LogEntry {
  method: string;
  path: string;
  status: number;
  time: number;
  auth: string;
}

/** A: a listed runtime error (pushed too), B: an instrument error, F: a firmware error (pushed, never listed) */
export type InjectionKind = 'A' | 'B' | 'F';

export interface InjectionRecord {
  /** the pending error's id (A), the instrument error's uuid (B) or the firmware error's id (F: on the socket only) */
  key: string;
  kind: InjectionKind;
  /** performance.timeOrigin + performance.now() at injection */
  time: number;
}
