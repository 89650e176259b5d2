/**
 * The poll loop's polls at once run on setImmediate (a frame's poll starts after the I/O at hand, not a timer's
 * millisecond later), its planned polls on setTimeout. Model-based: random sequences of triggers (a msg, a frame),
 * stops and poll outcomes (resolving at once or later with any delay, 0 included, rejecting, throwing before it
 * returns a promise) on a fake clock that fakes both, checked against what the loop promises: never two polls in
 * flight, none after stop, every trigger served, each poll started exactly when the one before, its delay and the
 * triggers say; a fleet sharing permits never has more polls in flight than permits. And a poll that returns at once
 * asking for no wait polls about once a millisecond (Node's minimum timer), as before setImmediate, not on every turn
 * of the event loop.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import { DEFAULT_INTERVAL_MS, PollLoop } from '../../src/nodes/shared/poll-loop';
import { PollPermits } from '../../src/nodes/shared/poll-permits';

type Clock = ReturnType<typeof FakeTimers.install>;

type Outcome =
  | { kind: 'resolve'; after: number; delay: number }
  | { kind: 'reject'; after: number }
  /** the poll function throws before it returns a promise */
  | { kind: 'throw' };

type Step = { kind: 'trigger'; fromFrame: boolean } | { kind: 'advance'; ms: number } | { kind: 'stop' };

type Event =
  | { type: 'start'; t: number; loop: number }
  | { type: 'end'; t: number; loop: number; delay: number }
  | { type: 'trigger'; t: number; loop: number }
  | { type: 'stop'; t: number; loop: number };

const outcome: fc.Arbitrary<Outcome> = fc.oneof(
  fc.record({
    kind: fc.constant('resolve' as const),
    after: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 })),
    delay: fc.oneof(fc.constant(0), fc.integer({ min: -5, max: 400 })),
  }),
  fc.record({ kind: fc.constant('reject' as const), after: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 })) }),
  fc.constant({ kind: 'throw' as const }),
);

const step = (stops: boolean): fc.Arbitrary<Step> =>
  fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('trigger' as const), fromFrame: fc.boolean() }), weight: 4 },
    {
      arbitrary: fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 600 })),
      }),
      weight: 5,
    },
    { arbitrary: fc.constant({ kind: 'stop' as const }), weight: stops ? 1 : 0 },
  );

/** When the poll outcomes run out: an hour's wait, so every run ends. */
const IDLE: Outcome = { kind: 'resolve', after: 0, delay: 3_600_000 };

/**
 * A loop whose polls follow `outcomes` in turn, logging into `log`; checks on the fly that it never has two polls in
 * flight and never polls after stop.
 */
function modelLoop(index: number, outcomes: Outcome[], log: Event[], permits?: PollPermits): PollLoop {
  let next = 0;
  let inFlight = 0;
  const loop: PollLoop = new PollLoop((started) => {
    assert.equal(inFlight, 0, `loop ${index}: a poll started while one is in flight`);
    assert.ok(!loop.stopped, `loop ${index}: a poll started after stop`);
    assert.equal(started, Date.now(), 'a poll counts from its start');
    inFlight++;
    log.push({ type: 'start', t: Date.now(), loop: index });
    const o = outcomes[next++] ?? IDLE;
    const end = (delay: number): void => {
      inFlight--;
      log.push({ type: 'end', t: Date.now(), loop: index, delay });
    };
    if (o.kind === 'throw') {
      end(DEFAULT_INTERVAL_MS);
      throw new Error('before any promise');
    }
    const settle = (): number => {
      if (o.kind === 'reject') {
        end(DEFAULT_INTERVAL_MS);
        throw new Error('no answer');
      }
      end(o.delay);
      return o.delay;
    };
    if (o.after === 0) return Promise.resolve().then(settle);
    return new Promise<number>((resolve, reject) =>
      setTimeout(() => {
        try {
          resolve(settle());
        } catch (err) {
          reject(err as Error);
        }
      }, o.after),
    );
  }, permits);
  return loop;
}

async function play(clock: Clock, loops: PollLoop[], steps: (Step & { loop: number })[], log: Event[]): Promise<void> {
  for (const s of steps) {
    const loop = loops[s.loop];
    if (s.kind === 'advance') await clock.tickAsync(s.ms);
    else if (s.kind === 'stop') {
      loop.stop();
      log.push({ type: 'stop', t: Date.now(), loop: s.loop });
    } else {
      loop.trigger(s.fromFrame);
      log.push({ type: 'trigger', t: Date.now(), loop: s.loop });
    }
  }
}

/**
 * The one-loop model: after a poll (or start(initial), a poll of no length at t0) the next one starts
 * - right after it (within the fake clock's millisecond) when something triggered it while it was in flight;
 * - else at the first trigger after it, when that comes before its plan;
 * - else at its plan, max(start + delay, end) (a delay past already: the 1 ms timer);
 * and never once the loop is stopped.
 */
function checkOneLoop(log: Event[], t0: number, initial: number, horizon: number): void {
  const stopAt = log.findIndex((e) => e.type === 'stop');
  let prev = { start: t0, end: t0, delay: initial, endIndex: -1, during: false };
  for (;;) {
    const rest = log.slice(prev.endIndex + 1);
    const nextStart = rest.findIndex((e) => e.type === 'start');
    const before = nextStart < 0 ? rest : rest.slice(0, nextStart);
    const trigger = before.find((e) => e.type === 'trigger');
    const stop = before.find((e) => e.type === 'stop');
    let lo: number;
    let hi: number;
    if (prev.during) [lo, hi] = [prev.end, prev.end + 1];
    else if (trigger) [lo, hi] = [trigger.t, trigger.t + 1];
    else {
      const plan = Math.max(prev.start + prev.delay, prev.end);
      [lo, hi] = plan === prev.end && prev.endIndex >= 0 ? [plan, plan + 1] : [plan, plan];
      if (prev.endIndex < 0 && initial <= 0) [lo, hi] = [t0, t0 + 1];
    }
    if (nextStart < 0) {
      // none: stopped before it was due, or it is due after the end of the run
      assert.ok(
        (stop && stop.t <= hi) || hi > horizon,
        `no poll after ${JSON.stringify(prev)}, due in [${lo}, ${hi}], run ends ${horizon}`,
      );
      return;
    }
    assert.ok(!stop, 'a poll after stop');
    const start = prev.endIndex + 1 + nextStart;
    const s = log[start];
    assert.ok(s.t >= lo && s.t <= hi, `poll at ${s.t}, due in [${lo}, ${hi}] after ${JSON.stringify(prev)}`);
    const endIndex = log.findIndex((e, i) => i > start && e.type === 'end');
    if (endIndex < 0) return; // still in flight at the end of the run
    const end = log[endIndex] as Extract<Event, { type: 'end' }>;
    const during = log.slice(start + 1, endIndex).some((e) => e.type === 'trigger');
    prev = { start: s.t, end: end.t, delay: end.delay, endIndex, during };
    if (stopAt >= 0 && stopAt < endIndex) {
      assert.ok(!log.slice(endIndex).some((e) => e.type === 'start'), 'a poll after stop');
      return;
    }
  }
}

describe('poll loop: polls at once on setImmediate, planned ones on a timer (model-based)', function () {
  let clock: Clock | undefined;
  afterEach(() => {
    clock?.uninstall();
    clock = undefined;
  });
  const install = (now: number): Clock =>
    (clock = FakeTimers.install({ now, toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'] }));
  /** One property run on its own fake clock, uninstalled whatever happens (a failure shows, not a second install). */
  const onClock =
    <A extends unknown[]>(now: number | ((first: A[0]) => number), run: (c: Clock, ...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      const c = install(typeof now === 'number' ? now : now(args[0]));
      try {
        await run(c, ...args);
      } finally {
        c.uninstall();
        clock = undefined;
      }
    };

  it('one loop: each poll starts exactly when its plan or a trigger says; never two at once, none after stop', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 500 })),
        fc.array(outcome, { maxLength: 30 }),
        fc.array(step(true), { minLength: 1, maxLength: 40 }),
        onClock(
          (t0: number) => t0,
          async (c, t0: number, initial: number, outcomes: Outcome[], steps: Step[]) => {
            const log: Event[] = [];
            const loop = modelLoop(0, outcomes, log);
            loop.start(initial);
            await play(
              c,
              [loop],
              steps.map((s) => ({ ...s, loop: 0 })),
              log,
            );
            await c.tickAsync(10_000); // what is due settles
            const horizon = Date.now();
            checkOneLoop(log, t0, initial, horizon);
            loop.stop();
            const polls = log.filter((e) => e.type === 'start').length;
            await c.tickAsync(3_600_000);
            assert.equal(log.filter((e) => e.type === 'start').length, polls, 'a poll after stop');
            assert.equal(c.countTimers(), 0, 'stop left a timer or an immediate');
          },
        ),
      ),
      { numRuns: 300 },
    );
  });

  it('every poll failing at once: at most 1 + triggers + elapsed / 5 s polls (the same bound as with a 1 ms timer)', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Outcome>({ kind: 'throw' }, { kind: 'reject', after: 0 }), { minLength: 50, maxLength: 50 }),
        fc.array(step(false), { minLength: 1, maxLength: 60 }),
        onClock(0, async (c, outcomes: Outcome[], steps: Step[]) => {
          const log: Event[] = [];
          const loop = modelLoop(0, outcomes, log);
          loop.start(0);
          await play(
            c,
            [loop],
            steps.map((s) => ({ ...s, loop: 0 })),
            log,
          );
          const elapsed = Date.now();
          const polls = log.filter((e) => e.type === 'start').length;
          const triggers = log.filter((e) => e.type === 'trigger').length;
          assert.ok(
            polls <= 1 + triggers + Math.floor(elapsed / DEFAULT_INTERVAL_MS),
            `${polls} polls, ${triggers} triggers in ${elapsed} ms`,
          );
          loop.stop();
        }),
      ),
      { numRuns: 200 },
    );
  });

  it('loops sharing permits: never more polls in flight than permits, none after stop, every trigger served', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.array(outcome, { maxLength: 15 }), { minLength: 2, maxLength: 4 }),
        fc.array(fc.tuple(step(true), fc.nat()), { minLength: 1, maxLength: 50 }),
        onClock(1_000_000, async (c, max: number, outcomes: Outcome[][], steps: [Step, number][]) => {
          const permits = new PollPermits(max);
          const log: Event[] = [];
          let inFlight = 0;
          let most = 0;
          const loops = outcomes.map((o, i) => modelLoop(i, o, log, permits));
          const counting = (e: Event): void => {
            if (e.type === 'start') most = Math.max(most, ++inFlight);
            if (e.type === 'end') inFlight--;
          };
          const push = log.push.bind(log);
          log.push = (...events: Event[]): number => {
            events.forEach(counting);
            return push(...events);
          };
          loops.forEach((l) => l.start(0));
          await play(
            c,
            loops,
            steps.map(([s, n]) => ({ ...s, loop: n % loops.length })),
            log,
          );
          await c.tickAsync(10_000);
          assert.ok(most <= max, `${most} polls in flight with ${max} permits`);
          assert.equal(
            permits.inFlight,
            log.filter((e) => e.type === 'start').length - log.filter((e) => e.type === 'end').length,
          );
          loops.forEach((loop, i) => {
            const mine = log.filter((e) => e.loop === i);
            const stop = mine.findIndex((e) => e.type === 'stop');
            if (stop >= 0) assert.ok(!mine.slice(stop).some((e) => e.type === 'start'), `loop ${i} polled after stop`);
            // a trigger is served by a poll that starts after it (none needed once the loop stopped)
            const last = mine.map((e) => e.type).lastIndexOf('trigger');
            if (last >= 0 && stop < 0)
              assert.ok(
                mine.slice(last).some((e) => e.type === 'start'),
                `loop ${i}: a trigger never served: ${JSON.stringify(mine.slice(-6))}`,
              );
          });
          loops.forEach((l) => l.stop());
          await c.tickAsync(3_600_000);
          assert.equal(permits.inFlight, 0, 'a permit kept after stop');
        }),
      ),
      { numRuns: 200 },
    );
  });

  it('a trigger replaces a planned timer with one immediate, a plan replaces an immediate: one pending, never both', async function () {
    const c = install(0);
    const starts: number[] = [];
    const loop = new PollLoop(async () => {
      starts.push(Date.now());
      return 1000;
    });
    loop.start(1000);
    assert.equal(c.countTimers(), 1);
    loop.trigger();
    loop.trigger(true);
    assert.equal(c.countTimers(), 1, 'the timer gave way to one immediate');
    await c.tickAsync(0);
    assert.deepEqual(starts, [0], 'the trigger polled in the same millisecond');
    assert.equal(c.countTimers(), 1, 'the next poll planned, nothing else');
    await c.tickAsync(5000);
    assert.deepEqual(starts, [0, 1000, 2000, 3000, 4000, 5000]);
    loop.trigger();
    loop.stop();
    assert.equal(c.countTimers(), 0, 'stop cleared the immediate');
    await c.tickAsync(5000);
    assert.equal(starts.length, 6, 'no poll after stop');
  });

  it('a poll that returns at once asking for no wait polls about once a millisecond, not every turn of the event loop', async function () {
    // real timers: Node's 1 ms minimum is what bounds it (before setImmediate, every poll at once had it)
    for (const delay of [0, -1, 0.4]) {
      let polls = 0;
      const loop = new PollLoop(() => {
        polls++;
        return Promise.resolve(delay);
      });
      const t0 = Date.now();
      loop.trigger();
      await new Promise((r) => setTimeout(r, 50));
      loop.stop();
      const ms = Date.now() - t0;
      assert.ok(polls <= 2 * ms + 10, `delay ${delay}: ${polls} polls in ${ms} ms`);
    }
  });
});
