/**
 * `npm run chaos -- [--seed N] [--minutes M] [--replicas 2|3] [--kinds a,b,...] [--no-shrink] [--shrink-runs K]
 *                   [--replay FILE.json]`
 * Draws a schedule from the seed (a random one, printed, when none is given), plays it (test/chaos/harness.ts) and
 * checks the invariants. On a failure it prints the seed and the schedule, shrinks the fault list to the shortest
 * that still breaks one of the same invariants (delta debugging: each try is a run of its own) and writes that as a
 * regression case in test/chaos/regressions/, which the bounded run in npm test replays. Exit 0 when every
 * invariant held, 1 when one broke, 2 on a usage error.
 */
import { parseArgs } from 'util';

import { parseSeed } from '../support/prng';
import { redisServerBinary } from '../support/redis-server';
import { abortRuns, runSchedule } from './harness';
import { brokenInvariants, printResult, printSchedule, readRegressions, writeRegression } from './report';
import { drawSchedule, FAULT_KINDS, FaultKind, Schedule, withFaults } from './schedule';
import { ddmin } from './shrink';

function usage(message: string): never {
  console.error(
    `${message}\nusage: npm run chaos -- [--seed N] [--minutes M] [--replicas 2|3] [--kinds ${FAULT_KINDS.join(',')}] [--no-shrink] [--shrink-runs K] [--replay FILE.json]`,
  );
  process.exit(2);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      minutes: { type: 'string', default: '5' },
      replicas: { type: 'string', default: '3' },
      kinds: { type: 'string' },
      'no-shrink': { type: 'boolean', default: false },
      'shrink-runs': { type: 'string', default: '12' },
      replay: { type: 'string' },
    },
  });
  if (!redisServerBinary()) usage('the chaos test needs redis-server on the PATH (apt-get install redis-server)');
  let schedule: Schedule;
  if (values.replay) {
    const found = readRegressions().find((r) => values.replay?.endsWith(r.file));
    if (!found) usage(`no regression ${values.replay} in test/chaos/regressions`);
    schedule = found.regression.schedule;
  } else {
    const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : parseSeed(values.seed);
    const minutes = Number(values.minutes);
    if (!(minutes > 0 && minutes <= 24 * 60)) usage(`--minutes must be a number from 0 to 1440, not "${values.minutes}"`);
    const replicas = Number(values.replicas);
    if (replicas !== 2 && replicas !== 3) usage(`--replicas must be 2 or 3, not "${values.replicas}"`);
    const kinds = values.kinds?.split(',').map((k) => k.trim()) as FaultKind[] | undefined;
    const unknown = kinds?.filter((k) => !FAULT_KINDS.includes(k));
    if (unknown && unknown.length > 0) usage(`unknown fault kinds: ${unknown.join(', ')}`);
    schedule = drawSchedule(seed, { durationMs: Math.round(minutes * 60_000), replicas, kinds });
  }
  printSchedule(schedule, console.log);
  const result = await runSchedule(schedule);
  printResult(result, console.log);
  const broke = brokenInvariants(result);
  if (broke.length === 0) {
    console.log(`\nchaos seed ${schedule.seed}: every invariant held`);
    return 0;
  }
  console.log(
    `\nchaos seed ${schedule.seed}: BROKE ${broke.map((i) => `(${i})`).join(' ')}; replay with --seed ${schedule.seed}`,
  );
  for (const [name, log] of Object.entries(result.logs)) console.log(`--- ${name} log (tail):\n${log.slice(-1500)}`);
  if (values['no-shrink'] || values.replay) return 1;

  console.log(`\nshrinking the ${schedule.faults.length} faults (at most ${values['shrink-runs']} runs)…`);
  const quiet: string[] = [];
  const { result: faults, runs } = await ddmin(
    schedule.faults,
    async (subset) => {
      const shorter = withFaults(schedule, subset);
      console.log(
        `  try ${subset.length} faults (${subset.map((f) => `#${f.n}`).join(' ') || 'none'}), ${(shorter.durationMs / 1000).toFixed(0)} s`,
      );
      const r = await runSchedule(shorter, (line) => quiet.push(line));
      const still = brokenInvariants(r).some((i) => broke.includes(i));
      console.log(`    ${still ? `fails: ${brokenInvariants(r).join('')}` : 'passes'}`);
      return still;
    },
    Number(values['shrink-runs']),
  );
  const shrunk = withFaults(schedule, faults);
  console.log(`\nshortest schedule found (${runs} runs):`);
  printSchedule(shrunk, console.log);
  const command = `npm run chaos -- ${process.argv.slice(2).join(' ')}`;
  const file = writeRegression(shrunk, broke, `shrunk from ${command}; broke ${broke.join(', ')}`);
  console.log(`regression case written: ${file}`);
  return 1;
}

let aborting = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (aborting) return;
    aborting = true;
    console.error(`\n${signal}: stopping every replica, Redis and simulator…`);
    void abortRuns().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    void abortRuns().finally(() => process.exit(1));
  },
);
