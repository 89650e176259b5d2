/**
 * What the bounded chaos run inside `npm test` draws and checks, in one place. All five invariants are checked; a
 * fault kind left out of BOUNDED_KINDS breaks one of them on this branch (see README "Chaos test": which fault finds
 * which bug) and comes in once its fix is merged; without editing, LH_CHAOS_KNOWN=kind,kind (fault kinds and invariant
 * letters, comma-separated) or LH_CHAOS_KNOWN=all adds some. Regression cases (test/chaos/regressions/*.json) whose
 * fault kinds and broken invariants are all included are replayed when BOUNDED_REPLAYS names them (or
 * LH_CHAOS_REPLAY=file,file or all); the others are listed as pending, with the switch that turns them on.
 */
import { Invariant, INVARIANTS } from './invariants';
import { FAULT_KINDS, FaultKind } from './schedule';

/**
 * The fixed seed of the bounded run: with every kind below, its 40 s draw holds a restore of a stale snapshot, a
 * FLUSHALL, a replica restarted while Redis refuses it (NOAUTH), answers refused, connections reset and two errors
 * listed under the id of another (431, the seed before, drew none of the Redis losses once they were included).
 */
export const BOUNDED_SEED = 249;
/** Its length (the whole test, with two Node-REDs starting and stopping, stays within 90 s). */
export const BOUNDED_MS = 40_000;

/**
 * Fault kinds that hold every invariant on this branch: all of them. Each kind that broke one before its fix came in
 * held every invariant alone for 90 s with 2 replicas (`npm run chaos -- --replicas 2 --minutes 1.5 --no-shrink
 * --seed S --kinds K`): flushall (S 11: 8 FLUSHALLs, 48 errors, 22 raised again all marked), redis-restart-empty (S 13:
 * 7 restarts, 50 errors), redis-restart-stale (S 13: 6 stale restores, 50 errors; before the write sequence 3 of 50
 * were raised again unmarked), other-instruments (S 12: 4 redeploys, 52 errors), two-errors-one-id (S 14: 46 errors,
 * 3 listed under the id of another), redis-refuses-auth-at-start (S 15: 5 faults, 47 errors).
 */
export const BOUNDED_KINDS: readonly FaultKind[] = [
  'kill-restart',
  'pause-past-lease',
  'redis-restart-persist',
  'redis-down-at-start',
  'redeploy',
  'slow-instrument',
  'resetting-instrument',
  'answers-refused',
  'flushall',
  'redis-restart-empty',
  'redis-restart-stale',
  'other-instruments',
  'two-errors-one-id',
  'redis-refuses-auth-at-start',
];

export const BOUNDED_INVARIANTS: readonly Invariant[] = INVARIANTS;

/**
 * Regression cases the bounded run replays. None by default: the run above takes 60–80 s of the ~90 s npm test
 * allows it (Node-REDs starting and stopping included), and a replay costs its schedule plus ~20 s more (the
 * FLUSHALL case 25 s, the two-errors case 46 s). Both pass on this branch (`npm run chaos -- --replay FILE`), and what
 * they found is covered inside npm test without them: the FLUSHALL while the holder hiccups by
 * test/coordination/faults.test.ts (real Node-REDs) and by the seed's own FLUSHALL, two errors under one id by
 * test/coordination/two-errors-one-id.test.ts (a model over seeded lists) and by the seed's own shared id.
 */
export const BOUNDED_REPLAYS: readonly string[] = [];

/** Whether the bounded run replays a regression case (BOUNDED_REPLAYS, or LH_CHAOS_REPLAY=file,file or all). */
export function replayed(file: string, env: string | undefined = process.env.LH_CHAOS_REPLAY): boolean {
  const named = (env ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return BOUNDED_REPLAYS.includes(file) || named.includes('all') || named.includes(file);
}

/** The kinds and invariants included, with LH_CHAOS_KNOWN's additions. */
export function included(env: string | undefined = process.env.LH_CHAOS_KNOWN): {
  kinds: FaultKind[];
  invariants: Invariant[];
} {
  const extra = (env ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const all = extra.includes('all');
  const unknown = extra.filter(
    (s) => s !== 'all' && !(FAULT_KINDS as readonly string[]).includes(s) && !(INVARIANTS as readonly string[]).includes(s),
  );
  if (unknown.length > 0)
    throw new RangeError(
      `LH_CHAOS_KNOWN: unknown ${unknown.join(', ')} (fault kinds: ${FAULT_KINDS.join(', ')}; invariants: a-e; or all)`,
    );
  return {
    kinds: FAULT_KINDS.filter((k) => all || BOUNDED_KINDS.includes(k) || extra.includes(k)),
    invariants: INVARIANTS.filter((i) => all || BOUNDED_INVARIANTS.includes(i) || extra.includes(i)),
  };
}
