import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import { PollLoop } from '../../src/nodes/shared/poll-loop';
import { CATCH_UP_WINDOW_MS, PollSchedule, PollSlot, slotOffset, untilNext } from '../../src/nodes/shared/poll-schedule';
import { busiestWindow } from '../support/busiest-window';

type Clock = ReturnType<typeof FakeTimers.install>;

/** One loop as lh-error-poll and lh-run-watch run it: first poll in the catch-up window, then slot after slot. */
interface Loop {
  slot: PollSlot;
  loop: PollLoop;
  polls: number[];
  /** when the pacer let a catch-up go */
  catchUps: number[];
}

/** The most of `times` in any window [t, t + windowMs) between `from` and `to`. */
function busiestBetween(times: number[], windowMs: number, from: number, to: number): number {
  return busiestWindow(
    times.filter((x) => x >= from && x < to),
    windowMs,
  );
}

function startLoop(schedule: PollSchedule, key: string, intervalMs: number, pollMs: number): Loop {
  const slot = schedule.join(key, intervalMs);
  const polls: number[] = [];
  const catchUps: number[] = [];
  const loop = new PollLoop(async (started) => {
    polls.push(started);
    await new Promise((resolve) => setTimeout(resolve, pollMs)); // the instrument's answer time
    return slot.delayAfter(started);
  });
  const l = { slot, loop, polls, catchUps };
  catchUp(l); // the first poll
  return l;
}

/** What a node does when its socket (re)connects, and for its first poll. */
function catchUp(l: Loop): void {
  l.slot.catchUp((since) => {
    l.catchUps.push(Date.now());
    l.loop.catchUp(since);
  });
}

const keys = (n: number, salt: string): string[] =>
  Array.from({ length: n }, (_, i) => `http://10.0.${i % 7}.${i}:${salt}/node${(i * 7919) % n}`);

describe('poll schedule (fleet spreading)', function () {
  let clock: Clock | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it('places the slots of a group evenly: rank·L/N, whole ms, and counts to the next slot', function () {
    assert.deepEqual(
      [0, 1, 2, 3].map((r) => slotOffset(r, 4, 5000)),
      [0, 1250, 2500, 3750],
    );
    assert.equal(slotOffset(0, 0, 5000), 0);
    assert.equal(untilNext(1000, 1000, 5000, true), 5000, 'on the slot: the next one is a whole interval later');
    assert.equal(untilNext(1000, 1000, 5000, false), 0);
    assert.equal(untilNext(1001, 1000, 5000, true), 4999);
    assert.equal(untilNext(7000, 1000, 5000, true), 4000, 'anchors repeat every interval, before or after the origin');
  });

  it('N loops started together (a deploy) poll spread: at most ⌈N/k⌉ + 1 in any L/k, each exactly every L once settled', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 500, max: 60_000 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.integer({ min: 2, max: 20 }),
        async (n, interval, pollMs, t0, k) => {
          clock = FakeTimers.install({
            now: t0,
            toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'],
          });
          try {
            const schedule = new PollSchedule();
            // an answer takes up to a quarter of the interval (a poll slower than its slot lands a slot later)
            const loops = keys(n, 'd').map((key) =>
              startLoop(schedule, key, interval, Math.min(pollMs, Math.floor(interval / 4))),
            );
            await clock.tickAsync(interval * 5);
            const all = loops.flatMap((l) => l.polls);
            const window = Math.min(interval, CATCH_UP_WINDOW_MS);
            // the first polls: let go within the catch-up window (each polls as its timer of 0 ms fires), spread over it
            assert.ok(
              loops.every((l) => l.catchUps[0] >= t0 && l.catchUps[0] < t0 + window && l.polls[0] - l.catchUps[0] <= 1),
              'first polls within the catch-up window',
            );
            const firsts = loops.map((l) => l.catchUps[0]);
            assert.ok(busiestBetween(firsts, window / k, t0, t0 + window) <= Math.ceil(n / k) + 1, 'first polls spread');
            // settled (from the third interval on): spread over the interval, and the interval exact
            const from = t0 + interval * 3;
            const busiest = busiestBetween(all, interval / k, from, t0 + interval * 5);
            assert.ok(busiest <= Math.ceil(n / k) + 1, `${busiest} polls in ${interval / k} ms of ${n} loops`);
            for (const l of loops) {
              // a first poll close before its slot is followed by one just after it (timers of 0 ms fire 1 ms late, an
              // answer may outlast the slot), then by the slot: exactly every L from then on
              const later = l.polls.filter((t) => t >= from);
              for (let i = 1; i < later.length; i++)
                assert.equal(later[i] - later[i - 1], interval, 'the steady interval is exact');
              assert.equal(untilNext(later[0], t0 + l.slot.phaseMs(), interval, false), 0, 'on its slot');
              assert.ok(l.polls[1] - l.polls[0] <= interval, 'the second poll within one interval of the first');
            }
            loops.forEach((l) => l.loop.stop());
          } finally {
            clock.uninstall();
            clock = undefined;
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a reconnect wave (every socket of the fleet at once) catches up spread over the window, never in one burst', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 400 }),
        fc.integer({ min: 500, max: 60_000 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 2, max: 20 }),
        async (n, interval, t0, when, k) => {
          clock = FakeTimers.install({
            now: t0,
            toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'],
          });
          try {
            const schedule = new PollSchedule();
            const loops = keys(n, 'r').map((key) => startLoop(schedule, key, interval, 0));
            await clock.tickAsync(interval * 2 + Math.floor(when * interval));
            const wave = clock.now;
            const before = loops.map((l) => l.polls.length);
            const firedBefore = loops.map((l) => l.catchUps.length);
            for (const l of loops) catchUp(l); // every socket reconnects at once
            const window = Math.min(interval, CATCH_UP_WINDOW_MS);
            await clock.tickAsync(window + 1);
            const caught = loops.map((l, i) => l.polls.slice(before[i]).filter((t) => t <= wave + window));
            assert.ok(
              caught.every((c) => c.length >= 1),
              'every loop polled within the catch-up window',
            );
            const fired = loops.flatMap((l, i) => l.catchUps.slice(firedBefore[i]));
            assert.equal(fired.length, n, 'one catch-up each');
            const busiest = busiestBetween(fired, window / k, wave, wave + window + 1);
            assert.ok(busiest <= Math.ceil(n / k) + 1, `${busiest} catch-ups in ${window / k} ms of ${n}`);
            const polled = busiestBetween(
              loops.flatMap((l, i) => l.polls.slice(before[i])),
              window / k,
              wave,
              wave + window + 1,
            );
            // on top of the safety net's own spread share of that window, the wave adds at most its paced share
            const own = Math.ceil((n * window) / k / interval) + 1;
            assert.ok(polled <= Math.ceil(n / k) + 1 + own, `${polled} polls in ${window / k} ms of ${n}`);
            loops.forEach((l) => l.loop.stop());
          } finally {
            clock.uninstall();
            clock = undefined;
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a redeploy that adds and removes loops re-spreads within one interval; no loop ever waits longer than L', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 500, max: 30_000 }),
        fc.integer({ min: 2, max: 10 }),
        async (n, added, removedWanted, interval, k) => {
          clock = FakeTimers.install({
            now: 1_000_000,
            toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'],
          });
          try {
            const schedule = new PollSchedule();
            const loops = keys(n, 'a').map((key) => startLoop(schedule, key, interval, 10));
            await clock.tickAsync(interval * 2);
            const removed = Math.min(removedWanted, n - 1);
            for (const l of loops.splice(0, removed)) {
              l.loop.stop();
              l.slot.leave();
            }
            loops.push(...keys(added, 'b').map((key) => startLoop(schedule, key, interval, 10)));
            const changed = clock.now;
            await clock.tickAsync(interval * 4);
            const size = loops.length;
            assert.equal(schedule.size(interval), size);
            const busiest = busiestBetween(
              loops.flatMap((l) => l.polls),
              interval / k,
              changed + interval * 2,
              changed + interval * 4,
            );
            assert.ok(busiest <= Math.ceil(size / k) + 1, `${busiest} polls in ${interval / k} ms of ${size} loops`);
            for (const l of loops) {
              for (let i = 1; i < l.polls.length; i++)
                assert.ok(l.polls[i] - l.polls[i - 1] <= interval, 'at most L between polls');
            }
            loops.forEach((l) => l.loop.stop());
          } finally {
            clock.uninstall();
            clock = undefined;
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a timer firing a millisecond early (libuv) does not make a second poll for the same slot', async function () {
    clock = FakeTimers.install({ now: 10_000, toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'] });
    const fake = clock;
    const schedule = new PollSchedule();
    const l = startLoop(schedule, 'only', 1000, 5);
    await fake.tickAsync(2500);
    assert.deepEqual(l.polls, [10_001, 11_000, 12_000]); // the first: the pacer, then a timer of 0 ms
    // from now on every timer fires 1 ms before its time, by Date.now()
    const now = Date.now;
    Date.now = () => fake.now - 1;
    try {
      await fake.tickAsync(2000);
    } finally {
      Date.now = now;
    }
    assert.deepEqual(l.polls, [10_001, 11_000, 12_000, 13_000, 14_000], 'one poll per slot, each counted from its slot');
    l.loop.stop();
  });

  it('a push is never delayed by a scheduled poll, and does not move the schedule', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 500, max: 10_000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 30 }),
        async (n, interval, pollMs, gaps) => {
          clock = FakeTimers.install({
            now: 0,
            toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'],
          });
          try {
            const schedule = new PollSchedule();
            const answer = Math.min(pollMs, interval - 1);
            const loops = keys(n, 'p').map((key) => startLoop(schedule, key, interval, answer));
            await clock.tickAsync(interval * 2);
            const target = loops[0];
            const phase = target.slot.phaseMs();
            for (const gap of gaps) {
              await clock.tickAsync(gap);
              const pushedAt: number = clock.now;
              const last = target.polls[target.polls.length - 1];
              const inFlight = pushedAt < last + answer;
              const count = target.polls.length;
              target.loop.trigger(); // a frame on the socket
              await clock.tickAsync(0);
              if (!inFlight) {
                assert.equal(target.polls.length, count + 1, 'no poll in flight: the push polls at once');
                assert.equal(target.polls[count], pushedAt);
              } else {
                await clock.tickAsync(last + answer + 1 - clock.now);
                // a timer of 0 ms fires 1 ms later
                assert.ok(target.polls[count] - (last + answer) <= 1, 'right after the poll in flight, not at the next slot');
              }
            }
            // the schedule kept its slot: the polls after the last push include the slot, at most L after any poll
            await clock.tickAsync(interval * 2);
            const end = clock.now;
            const slots = target.polls.filter((t) => t > end - interval * 2);
            assert.ok(
              slots.some((t) => (((t - phase) % interval) + interval) % interval === 0),
              `a poll on the slot (phase ${phase}): ${slots}`,
            );
            for (let i = 1; i < target.polls.length; i++) assert.ok(target.polls[i] - target.polls[i - 1] <= interval);
            loops.forEach((l) => l.loop.stop());
          } finally {
            clock.uninstall();
            clock = undefined;
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
