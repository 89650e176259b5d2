/** What a chaos run prints, and the regression files a failing run leaves (test/chaos/regressions/*.json). */
import fs from 'fs';
import path from 'path';

import type { RunResult } from './harness';
import { Invariant, INVARIANT_TEXT, INVARIANTS } from './invariants';
import { describeFault, FaultKind, kindsOf, Schedule } from './schedule';

export const REGRESSIONS_DIR = path.join(__dirname, 'regressions');

export interface Regression {
  /** what it shows, in a line */
  note: string;
  seed: number;
  /** the invariants it broke when it was found */
  broke: Invariant[];
  /** the faults, as lines (read by people; the schedule is what is replayed) */
  faults: string[];
  schedule: Schedule;
}

export function printSchedule(schedule: Schedule, say: (line: string) => void): void {
  say(
    `seed ${schedule.seed}: ${(schedule.durationMs / 1000).toFixed(0)} s, ${schedule.replicas} replicas, lease ${schedule.leaseSeconds} s, ` +
      `${schedule.faults.length} faults, ${schedule.errors.length} errors`,
  );
  for (const f of schedule.faults) say(`  ${describeFault(f)}`);
}

/**
 * The command that plays a drawn schedule again: its seed, length and replicas, and the kinds it was drawn from
 * (`drawnFrom`: the draw picks among them, so the kinds that came out, fewer or in another order, draw another
 * schedule).
 */
export function replayCommand(schedule: Schedule, drawnFrom: readonly FaultKind[]): string {
  return `npm run chaos -- --seed ${schedule.seed} --minutes ${schedule.durationMs / 60_000} --replicas ${schedule.replicas} --kinds ${drawnFrom.join(',')}`;
}

export function brokenInvariants(result: RunResult): Invariant[] {
  return INVARIANTS.filter((i) => result.verdict.violations.some((v) => v.invariant === i));
}

export function printResult(result: RunResult, say: (line: string) => void): void {
  const c = result.counts;
  const kinds = Object.entries(c.faults)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  say(`faults drawn by kind: ${kinds || 'none'}`);
  say(
    `errors: ${c.errorsInjected} injected, ${c.errorsRaised} raised (${c.raisedMsgs} raised msgs, ${c.redeliveredMsgs} marked redelivered, ${c.lostMsgs} marked coordination lost), ${c.resolvedMsgs} resolved msgs`,
  );
  say(
    `answers: ${c.answersSent} sent, ${c.answersAccepted} accepted; writes ${c.writes}, intents seen ${c.intents}; lease samples ${c.leaseSamples}`,
  );
  for (const i of INVARIANTS) {
    const broken = result.verdict.violations.filter((v) => v.invariant === i);
    say(
      `  (${i}) ${INVARIANT_TEXT[i]}: ${result.verdict.checks[i]} checks, ${broken.length === 0 ? 'held' : `${broken.length} BROKEN`}`,
    );
    for (const v of broken.slice(0, 8)) say(`      ${v.text}`);
    if (broken.length > 8) say(`      … and ${broken.length - 8} more`);
  }
  if (result.verdict.excusedWrites > 0)
    say(`  (${result.verdict.excusedWrites} writes made between the last read of a chain and Redis losing it: not counted)`);
}

/** Writes a regression file; returns its path. */
export function writeRegression(schedule: Schedule, broke: Invariant[], note: string): string {
  fs.mkdirSync(REGRESSIONS_DIR, { recursive: true });
  const kinds = kindsOf(schedule).join('+') || 'no-fault';
  const file = path.join(REGRESSIONS_DIR, `seed-${schedule.seed}-${broke.join('')}-${kinds}.json`);
  const regression: Regression = { note, seed: schedule.seed, broke, faults: schedule.faults.map(describeFault), schedule };
  fs.writeFileSync(file, `${JSON.stringify(regression, null, 2)}\n`);
  return file;
}

export function readRegressions(): { file: string; regression: Regression }[] {
  if (!fs.existsSync(REGRESSIONS_DIR)) return [];
  return fs
    .readdirSync(REGRESSIONS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ file: f, regression: JSON.parse(fs.readFileSync(path.join(REGRESSIONS_DIR, f), 'utf8')) as Regression }));
}
