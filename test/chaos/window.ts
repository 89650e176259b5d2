/**
 * `node -r ts-node/register/transpile-only test/chaos/window.ts SEED MINUTES FROM_S TO_S [RUNS]`: replays a window of a
 * seed's schedule (its faults and errors between FROM_S and TO_S, moved to start at 10 s) RUNS times, printing each
 * result: a long run's failure studied in a few minutes (the state before the window differs, so a window that
 * passes proves nothing; one that fails is a lead).
 */
import { runSchedule } from './harness';
import { brokenInvariants, printResult } from './report';
import { drawSchedule, Schedule } from './schedule';

async function main(): Promise<number> {
  const [seed, minutes, from, to, runs = 1] = process.argv.slice(2).map(Number);
  const full = drawSchedule(seed, { durationMs: minutes * 60_000, replicas: 3 });
  const shift = from * 1000 - 10_000;
  const inWindow = (at: number): boolean => at >= from * 1000 && at < to * 1000;
  const errors = full.errors.filter((e) => inWindow(e.at));
  const kept = new Set(errors.map((e) => e.n));
  const schedule: Schedule = {
    ...full,
    durationMs: (to - from) * 1000 + 30_000,
    faults: full.faults.filter((f) => inWindow(f.at)).map((f) => ({ ...f, at: f.at - shift })),
    errors: errors.map((e) => ({
      ...e,
      at: e.at - shift,
      twin: e.twin !== undefined && kept.has(e.twin) ? e.twin : undefined,
      reuses: e.reuses !== undefined && kept.has(e.reuses) ? e.reuses : undefined,
    })),
  };
  let failed = 0;
  for (let i = 0; i < runs; i++) {
    const result = await runSchedule(schedule, () => undefined);
    printResult(result, console.log);
    if (brokenInvariants(result).length > 0) failed++;
  }
  console.log(`window ${from}-${to} s of seed ${seed}: ${failed} of ${runs} runs broke an invariant`);
  return failed > 0 ? 1 : 0;
}

main().then((code) => process.exit(code));
