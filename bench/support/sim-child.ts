/**
 * Child process hosting one or more simulators, so their CPU never counts against the Node-RED process under
 * measurement. Driven over IPC by sim-fleet.ts: {id, cmd, args} -> {id, result} | {id, error}.
 */
import { monitorEventLoopDelay } from 'perf_hooks';

import type { Faults, LoggedRequest } from '../../src/simulator';
import { Simulator } from '../../src/simulator';
import { preciseNow } from './report';
import type { ChildCommand, ChildReply, ChildUsage, InjectionKind, InjectionRecord, LogEntry } from './sim-protocol';

const sims: Simulator[] = [];
const injections: InjectionRecord[] = [];
const injectTimers = new Set<NodeJS.Timeout>();
/** simulators being restarted: a stopped instrument raises no errors, so none is injected meanwhile */
const down = new Set<number>();
/** this process's own CPU and event-loop delay, reported to the benchmark apart from Node-RED's */
const LOOP_SAMPLE_MS = 10;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
/** ns in the histogram → ms of delay beyond the sampling timer's own period */
const lag = (ns: number): number => Math.max(0, ns / 1e6 - LOOP_SAMPLE_MS);
loopDelay.enable();
let usageMark = { cpu: process.cpuUsage(), at: process.hrtime.bigint() };

function usage(reset: boolean): ChildUsage {
  if (reset) {
    loopDelay.reset();
    usageMark = { cpu: process.cpuUsage(), at: process.hrtime.bigint() };
  }
  const cpu = process.cpuUsage(usageMark.cpu);
  return {
    cpuUserUs: cpu.user,
    cpuSystemUs: cpu.system,
    elapsedUs: Math.max(1, Number(process.hrtime.bigint() - usageMark.at) / 1000),
    loopDelayP99Ms: loopDelay.count > 0 ? lag(loopDelay.percentile(99)) : 0,
    loopDelayMaxMs: loopDelay.count > 0 ? lag(loopDelay.max) : 0,
  };
}

function compact(r: LoggedRequest): LogEntry {
  return { method: r.method, path: r.path, status: r.status, time: r.time, auth: r.authorization ?? '' };
}

function later(ms: number, fn: () => void): void {
  const t = setTimeout(() => {
    injectTimers.delete(t);
    fn();
  }, ms);
  injectTimers.add(t);
}

/**
 * Injects errors at exponentially distributed (Poisson) times, each resolved `holdMs` later. The first one too: a
 * fleet then sees its rate from the start. With `burst`, the first comes within 200 ms instead (what the fleet bench
 * did before issue 23: one error on every instrument at once, a burst as large as the fleet, then the rate).
 */
function startInjecting(
  index: number,
  ratePerSec: number,
  durationMs: number,
  holdMs: number,
  kinds: InjectionKind[] = ['A', 'B'],
  burst = false,
): void {
  const sim = sims[index];
  const end = Date.now() + durationMs;
  let n = 0;
  const next = (): void => {
    if (Date.now() >= end) return;
    if (down.has(index)) {
      later(-Math.log(1 - Math.random()) * (1000 / ratePerSec), next);
      return;
    }
    const kind = kinds[n++ % kinds.length];
    const time = preciseNow();
    const key =
      kind === 'A'
        ? sim.injectPendingError({ severity: 'Error' }).id
        : kind === 'F'
          ? sim.raiseFirmwareError({ severity: 'Error' }).id
          : sim.injectInstrumentError().uuid;
    injections.push({ key, kind, time });
    const resolve: Record<InjectionKind, (id: string) => void> = {
      A: (id) => sim.resolvePendingError(id),
      B: (id) => sim.resolveInstrumentError(id),
      F: (id) => sim.resolveFirmwareError(id),
    };
    later(holdMs, () => resolve[kind](key));
    later(-Math.log(1 - Math.random()) * (1000 / ratePerSec), next);
  };
  later(burst ? Math.random() * 200 : -Math.log(1 - Math.random()) * (1000 / ratePerSec), next);
}

async function run(cmd: ChildCommand): Promise<unknown> {
  switch (cmd.cmd) {
    case 'start': {
      for (let i = 0; i < cmd.count; i++) {
        const sim = new Simulator({ ...cmd.options });
        await sim.start();
        sims.push(sim);
      }
      return sims.map((s) => ({ baseUrl: s.baseUrl, instrumentUrl: s.instrumentUrl }));
    }
    case 'setFaults':
      sims[cmd.index].setFaults(cmd.faults as Faults);
      return null;
    case 'log':
      return sims[cmd.index].requests.map(compact);
    case 'logs':
      return sims.map((s) => s.requests.map(compact));
    case 'clearLog':
      for (const s of sims) s.clearRequests();
      return null;
    case 'counters': {
      const st = sims[cmd.index].state;
      return { logins: st.logins, renewals: st.renewals, failedLogins: st.failedLogins };
    }
    case 'inject':
      startInjecting(cmd.index, cmd.ratePerSec, cmd.durationMs, cmd.holdMs, cmd.kinds, cmd.burst);
      return null;
    case 'flood': {
      const sim = sims[cmd.index];
      for (let i = 0; i < cmd.count; i++) {
        const data = JSON.stringify({ id: `flood-${Date.now()}-${i}` });
        sim.publishRawFrame('errors', JSON.stringify({ code: 'RuntimeErrorResolved', description: '', data }));
      }
      return preciseNow();
    }
    case 'dropSockets':
      return cmd.indexes.reduce((n, i) => n + sims[i].dropEventSockets(), 0);
    case 'restart':
      down.add(cmd.index);
      try {
        await sims[cmd.index].restart(cmd.downtimeMs);
      } finally {
        down.delete(cmd.index);
      }
      return null;
    case 'socketCounts':
      return sims.map((s) => s.eventSocketInfo.counts.errors);
    case 'injections': {
      const out = injections.splice(0);
      return out;
    }
    case 'usage':
      return usage(cmd.reset);
    case 'stop':
      loopDelay.disable();
      for (const t of injectTimers) clearTimeout(t);
      await Promise.all(sims.map((s) => s.stop()));
      return null;
  }
}

process.on('message', (msg: ChildCommand & { id: number }) => {
  run(msg).then(
    (result) => process.send?.({ id: msg.id, result } satisfies ChildReply),
    (err: unknown) =>
      process.send?.({ id: msg.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies ChildReply),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, result: 'ready' } satisfies ChildReply);
