/**
 * Benchmark: several Node-REDs, one lab (issue 19). Two real Node-RED processes with identical flows watch one
 * simulator (A and B errors) through a real redis-server; 300 A and 300 B errors are raised over 3 minutes, each
 * resolved 12–20 s later (longer than a failover), and the lease holder is killed with SIGKILL every 40 s (at whatever moment that is) and
 * restarted. Counts, across both replicas, every *raised* and *resolved* msg per error (losses; duplicates not marked
 * `msg.redelivered`; redeliveries of what a killed holder recorded and had not settled), the
 * failover time (kill → another replica holds the lease → its first msg), CPU and RSS per replica, and Redis
 * round trips per poll. LH_HA_SECONDS shortens the run (the error counts scale with it).
 */
import fs from 'fs';

import Redis from 'ioredis';

import { Collected, Collector, credentialsFor, leaseHolder, Replica, watchFlows } from '../test/support/red-replicas';
import { RedisHarness } from '../test/support/redis-server';
import { startSimulator } from '../test/support/runtime';
import { percentile, printTable, round, sleep, verdict, writeResult } from './support/report';

const SECONDS = Number(process.env.LH_HA_SECONDS ?? 180);
const PER_SOURCE = Math.round((300 * SECONDS) / 180);
const KILL_EVERY_MS = 40_000;
const LEASE_S = 5;
const INTERVAL_S = 1;
const TICK = 100; // clock ticks per second (/proc/<pid>/stat)
/**
 * Each error is resolved 2 lease times + 2 s after it was raised, or up to 8 s later: longer than any failover gap,
 * so every error is listed by the instrument while some replica polls. (An error that comes and goes entirely while
 * no replica polls is seen by nobody, with one Node-RED or several: polling cannot report what it never saw listed.)
 */
const RESOLVE_MIN_MS = 2 * LEASE_S * 1000 + 2000;

/** CPU seconds and RSS of a process, from /proc. */
function usage(pid: number | undefined): { cpuS: number; rssMb: number } | undefined {
  if (!pid) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuS = (Number(fields[11]) + Number(fields[12])) / TICK;
    const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuS, rssMb: rss ? Number(rss[1]) / 1024 : 0 };
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const redisServer = new RedisHarness();
  await redisServer.start();
  const redis = new Redis(redisServer.url);
  const sim = await startSimulator();
  const collector = new Collector();
  await collector.start();
  const prefix = `lh-bench-ha-${process.pid}`;
  const instruments = [{ id: 'i1', baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl }];
  const flows = watchFlows({
    redisUrl: redisServer.url,
    prefix,
    leaseSeconds: LEASE_S,
    instruments,
    collectorUrl: collector.url,
    interval: INTERVAL_S,
  });
  const creds = credentialsFor(instruments);
  const replicas = [new Replica('r1', flows, creds), new Replica('r2', flows, creds)];
  await Promise.all(replicas.map((r) => r.start()));
  const holder = (): Promise<Replica | undefined> => leaseHolder(redis, prefix, sim, replicas);
  while (!(await holder())) await sleep(50);

  // CPU and RSS per replica slot (a killed replica's successor counts in the same slot)
  const cpu = new Map<string, number>();
  const rss = new Map<string, number[]>();
  const lastCpu = new Map<string, { pid: number; cpuS: number }>();
  const sample = (): void => {
    for (const r of replicas) {
      const u = usage(r.pid);
      if (!u || !r.pid) continue;
      const last = lastCpu.get(r.name);
      const delta = last && last.pid === r.pid ? u.cpuS - last.cpuS : 0;
      cpu.set(r.name, (cpu.get(r.name) ?? 0) + Math.max(0, delta));
      lastCpu.set(r.name, { pid: r.pid, cpuS: u.cpuS });
      rss.set(r.name, [...(rss.get(r.name) ?? []), u.rssMb]);
    }
  };
  const sampler = setInterval(sample, 1000);
  const evalCalls = async (): Promise<number> =>
    Number(/cmdstat_eval:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
  const commandsBefore = Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0);
  const evalsBefore = await evalCalls();
  sim.clearRequests();

  const raised: { source: string; id: string; at: number }[] = [];
  const kills: number[] = [];
  const started = Date.now();
  const total = 2 * PER_SOURCE;
  const gap = (SECONDS * 1000) / total;
  const failovers: { takeoverMs: number; firstMsgMs: number }[] = [];
  let nextKill = started + KILL_EVERY_MS;
  const resolveTimers: NodeJS.Timeout[] = [];
  for (let i = 0; i < total; i++) {
    const at = started + i * gap;
    while (Date.now() < at) {
      if (Date.now() >= nextKill) {
        nextKill += KILL_EVERY_MS;
        const victim = await holder();
        if (victim) {
          const killedAt = Date.now();
          const victimPid = victim.pid;
          kills.push(killedAt);
          const before = collector.events.length;
          await victim.kill();
          void (async () => {
            let takeover = NaN;
            while (Date.now() - killedAt < 60_000) {
              // any live process other than the killed one (the victim's restart, a new process, counts too)
              const h = await holder();
              if (h && h.pid !== victimPid && Number.isNaN(takeover)) takeover = Date.now() - killedAt;
              if (!Number.isNaN(takeover) && collector.events.slice(before).some((e) => e.at > killedAt)) break;
              await sleep(20);
            }
            failovers.push({ takeoverMs: takeover, firstMsgMs: Date.now() - killedAt });
          })();
          await victim.start();
        }
      }
      await sleep(Math.min(20, Math.max(0, at - Date.now())));
    }
    const source = i % 2 === 0 ? 'A' : 'B';
    const id =
      source === 'A'
        ? String(sim.injectPendingError({ title: `bench error ${i}` }).id)
        : sim.injectInstrumentError({ title: `bench error ${i}` }).uuid;
    raised.push({ source, id, at: Date.now() });
    resolveTimers.push(
      setTimeout(
        () => (source === 'A' ? sim.resolvePendingError(id) : sim.resolveInstrumentError(id)),
        RESOLVE_MIN_MS + Math.random() * 8000,
      ),
    );
  }
  // every error resolved, and the last msgs delivered (two leases at most after the last kill)
  await sleep(RESOLVE_MIN_MS + 8000 + 2 * LEASE_S * 1000 + 2000);
  clearInterval(sampler);
  sample();
  const elapsedS = (Date.now() - started) / 1000;
  const commands = Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0) - commandsBefore;
  const scripts = (await evalCalls()) - evalsBefore;
  // one poll = one look at A and B together; counted by its A request
  const polls = sim.requests.filter((r) => r.api === 'A' && r.path.endsWith('/errors/check-for-pending-errors')).length;

  const count = (kind: string, id: string): number => collector.count(kind, id);
  // a duplicate is a second msg that does not say it may be one (msg.redelivered): a marked one is at-least-once
  const isRedelivery = (e: Collected): boolean => typeof e.redelivered === 'string';
  const unmarked = (kind: string, id: string): number =>
    collector.events.filter((e) => e.kind === kind && e.id === id && !isRedelivery(e)).length;
  const redelivered = collector.events.filter(isRedelivery).length;
  const dupRaised = raised.filter((e) => unmarked('raised', e.id) > 1).length;
  const lostRaised = raised.filter((e) => count('raised', e.id) === 0).length;
  const dupResolved = raised.filter((e) => unmarked('resolved', e.id) > 1).length;
  const lostResolved = raised.filter((e) => count('resolved', e.id) === 0).length;
  const uniqueRaised = raised.filter((e) => count('raised', e.id) > 0).length;
  const uniqueResolved = raised.filter((e) => count('resolved', e.id) > 0).length;
  const marked = collector.events.filter((e) => e.lost).length;
  for (const e of raised) {
    const missing = ['raised', 'resolved'].filter((kind) => count(kind, e.id) === 0);
    if (missing.length === 0) continue;
    const nearest = kills.map((k) => e.at - k).sort((a, b) => Math.abs(a) - Math.abs(b))[0];
    console.log(
      `lost: ${e.source} ${e.id} (${missing.join(', ')}), injected ${e.at - started} ms into the run, ${nearest} ms from the nearest kill`,
    );
  }
  const takeovers = failovers.map((f) => f.takeoverMs).filter((n) => Number.isFinite(n));
  const firsts = failovers.map((f) => f.firstMsgMs);
  const result = {
    seconds: round(elapsedS),
    errors: { A: PER_SOURCE, B: PER_SOURCE },
    kills: failovers.length,
    leaseS: LEASE_S,
    pollIntervalS: INTERVAL_S,
    raisedMsgs: collector.events.filter((e) => e.kind === 'raised').length,
    resolvedMsgs: collector.events.filter((e) => e.kind === 'resolved').length,
    errorsRaised: uniqueRaised,
    errorsResolved: uniqueResolved,
    redeliveredMsgs: redelivered,
    duplicates: { raised: dupRaised, resolved: dupResolved },
    losses: { raised: lostRaised, resolved: lostResolved },
    markedLost: marked,
    failoverMs: {
      takeoverP50: percentile(takeovers, 50),
      takeoverP99: percentile(takeovers, 99),
      firstMsgP50: percentile(firsts, 50),
      firstMsgP99: percentile(firsts, 99),
    },
    replicas: replicas.map((r) => ({
      name: r.name,
      cpuPercentOfOneCore: round((100 * (cpu.get(r.name) ?? 0)) / elapsedS),
      rssMbMax: round(Math.max(...(rss.get(r.name) ?? [0]))),
    })),
    redisCommandsPerPoll: polls > 0 ? round(commands / polls, 2) : NaN,
    redisScriptCallsPerPoll: polls > 0 ? round(scripts / polls, 2) : NaN,
    redisCommands: commands,
    polls,
  };
  const pass = dupRaised + lostRaised + dupResolved + lostResolved === 0 && result.failoverMs.takeoverP99 <= 2 * LEASE_S * 1000;
  printTable('several Node-REDs (bench:ha)', [
    { figure: 'errors (A + B), kills', value: `${PER_SOURCE} + ${PER_SOURCE}, ${failovers.length} SIGKILLs of the holder` },
    { figure: 'errors raised / resolved (at least once)', value: `${uniqueRaised} / ${uniqueResolved} of ${total}` },
    { figure: 'raised / resolved msgs', value: `${result.raisedMsgs} / ${result.resolvedMsgs}` },
    { figure: 'msgs marked redelivered (holder killed before settling)', value: String(redelivered) },
    { figure: 'unmarked duplicates (raised, resolved)', value: `${dupRaised}, ${dupResolved}` },
    { figure: 'losses (raised, resolved)', value: `${lostRaised}, ${lostResolved}` },
    {
      figure: 'failover: lease taken over p50 / p99',
      value: `${result.failoverMs.takeoverP50} / ${result.failoverMs.takeoverP99} ms (lease ${LEASE_S} s)`,
    },
    {
      figure: 'failover: first msg of the new holder p50 / p99',
      value: `${result.failoverMs.firstMsgP50} / ${result.failoverMs.firstMsgP99} ms`,
    },
    ...result.replicas.map((r) => ({
      figure: `replica ${r.name}: CPU, RSS max`,
      value: `${r.cpuPercentOfOneCore} % of one core, ${r.rssMbMax} MB`,
    })),
    {
      figure: 'Redis per poll (both replicas, leases included)',
      value: `${result.redisScriptCallsPerPoll} script calls, ${result.redisCommandsPerPoll} commands (scripts count each command they run)`,
    },
    { figure: 'verdict', value: verdict(pass) },
  ]);
  writeResult('ha', { ...result, pass });
  for (const t of resolveTimers) clearTimeout(t);
  for (const r of replicas) await r.destroy();
  await collector.stop();
  await sim.stop();
  redis.disconnect();
  await redisServer.destroy();
  process.exitCode = pass ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
