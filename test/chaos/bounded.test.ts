/**
 * The bounded chaos run of `npm test` (its own run in scripts/run-tests.js): one fixed seed for 40 s with two real
 * Node-REDs, a real redis-server and the simulators, drawing the fault kinds of test/chaos/known.ts, then the kept
 * regression cases it names (BOUNDED_REPLAYS). Skipped, loudly, without redis-server. `npm run chaos` is the long run.
 */
import assert from 'assert';

import { redisServerBinary } from '../support/redis-server';
import { runSchedule } from './harness';
import { Invariant } from './invariants';
import { BOUNDED_MS, BOUNDED_SEED, included, replayed } from './known';
import { printResult, printSchedule, readRegressions, replayCommand } from './report';
import { drawSchedule, kindsOf, Schedule } from './schedule';

const { kinds, invariants } = included();

/** `replay`: the command that plays the schedule again (printed on a failure). */
async function expectHeld(schedule: Schedule, only: readonly Invariant[], replay: string): Promise<void> {
  const lines: string[] = [];
  const say = (line: string): void => void lines.push(line);
  printSchedule(schedule, say);
  const result = await runSchedule(schedule, say);
  printResult(result, say);
  // the counts are printed in every case (what was drawn, raised, answered, checked)
  console.log(
    lines
      .filter((l) => !l.startsWith('[chaos'))
      .map((l) => `      ${l}`)
      .join('\n'),
  );
  const broken = result.verdict.violations.filter((v) => only.includes(v.invariant));
  if (broken.length > 0) {
    for (const [name, log] of Object.entries(result.logs)) console.log(`--- ${name} log (tail):\n${log.slice(-1500)}`);
    assert.fail(
      `chaos seed ${schedule.seed} broke ${broken.map((v) => `(${v.invariant}) ${v.text}`).join('; ')}\n` +
        `replay: ${replay}\n${lines.join('\n')}`,
    );
  }
}

if (!redisServerBinary()) {
  console.warn(
    '\n!!! SKIPPED the chaos test (real Node-REDs, Redis restarts): no redis-server on the PATH. ' +
      'Enable it with `sudo apt-get install redis-server`.\n',
  );
}

(redisServerBinary() ? describe : describe.skip)('chaos: the bounded run (fixed seed, kept regressions)', function () {
  this.timeout(150_000);

  it(`seed ${BOUNDED_SEED}, ${BOUNDED_MS / 1000} s, 2 replicas: invariants ${invariants.join('')} hold under ${kinds.join(', ')}`, async function () {
    const schedule = drawSchedule(BOUNDED_SEED, { durationMs: BOUNDED_MS, replicas: 2, kinds });
    await expectHeld(schedule, invariants, replayCommand(schedule, kinds));
  });

  for (const { file, regression } of readRegressions()) {
    const missing = [
      ...kindsOf(regression.schedule).filter((k) => !kinds.includes(k)),
      ...regression.broke.filter((i) => !invariants.includes(i)),
    ];
    const title = `regression ${file}: ${regression.note}`;
    if (missing.length > 0) {
      it.skip(`${title} (pending: LH_CHAOS_KNOWN=${missing.join(',')})`);
      continue;
    }
    if (!replayed(file)) {
      it.skip(`${title} (not replayed here, see BOUNDED_REPLAYS: LH_CHAOS_REPLAY=${file})`);
      continue;
    }
    it(title, async function () {
      await expectHeld(regression.schedule, invariants, `npm run chaos -- --replay ${file}`);
    });
  }
});
