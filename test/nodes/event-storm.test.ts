/**
 * Issue 17.4 in a real Node-RED runtime: an instrument that accepts every websocket upgrade and closes it at once
 * (92 upgrades per channel, 94 error-list and 92 run-status polls and 184 connection msgs in 5 s before the fix)
 * now costs a bounded handful of each. And the connect-poll cap as a property over generated connect times.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import { LivePolls, PollBudget, PUSH_POLL_BURST, PUSH_POLL_REFILL_MS } from '../../src/nodes/shared/live-polls';
import { PollLoop } from '../../src/nodes/shared/poll-loop';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';
import { bServerFlow } from './lh-error-poll.support';

type Msg = Record<string, unknown>;
const ERROR_POLL = '/api/v1/errors/check-for-pending-errors';
const RUN_POLL = '/api/v1/protocol-run';

describe('event sockets of a hostile instrument, in Node-RED', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it('upgrades, polls and connection msgs stay bounded over 5 s (5 s poll interval)', async function () {
    sim.setSocketsCloseAtOnce(true);
    const server = bServerFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 5, wires: [[], [], ['pollConn']] },
        { id: 'watch', type: 'lh-run-watch', server: 'server', interval: 5, wires: [[], [], [], []] },
        { id: 'ev', type: 'lh-events', server: 'server', codes: '', wires: [[], ['conn']] },
        { id: 'pollConn', type: 'helper' },
        { id: 'conn', type: 'helper' },
      ],
      server.credentials,
    );
    const connection = collect(helper.getNode('conn'));
    const started = Date.now();
    await until(() => Date.now() - started >= 5000, 'the 5 s window', 20000);
    const upgrades = sim.eventSocketInfo.upgrades;
    const count = (path: string): number => sim.requests.filter((r) => r.method === 'GET' && r.path === path).length;
    for (const channel of ['events', 'errors'] as const) {
      const n = upgrades.filter((u) => u.channel === channel).length;
      // one fast retry (25–75 ms), then the back-off's 3 s doubled (0.3: 3 s from the first close, at most 2)
      assert.ok(n <= 3, `${n} upgrades on ${channel} (92 before)`);
    }
    // the first poll, one poll per reconnect (never held back: the socket's back-off bounds them), one regular at 5 s
    const bound = (channel: 'events' | 'errors'): number => 2 + upgrades.filter((u) => u.channel === channel).length;
    assert.ok(count(ERROR_POLL) <= bound('errors'), `${count(ERROR_POLL)} error-list polls (94 before)`);
    assert.ok(count(RUN_POLL) <= bound('events'), `${count(RUN_POLL)} run-status polls (92 before)`);
    assert.ok(connection.length <= 6, `${connection.length} connection msgs (184 before)`);
    assert.ok(
      connection.every((m: Msg) => ['connected', 'disconnected'].includes(String((m.payload as Msg).state))),
      'each one a real change',
    );
  });

  it('a 40 MiB frame: nothing emitted, the log says so once although the instrument sends it again', async function () {
    const server = bServerFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'ev', type: 'lh-events', server: 'server', codes: '', wires: [['events'], ['conn']] },
        { id: 'events', type: 'helper' },
        { id: 'conn', type: 'helper' },
      ],
      server.credentials,
    );
    const events = collect(helper.getNode('events'));
    const connection = collect(helper.getNode('conn'));
    const huge = Buffer.alloc(40 * 1024 * 1024, 0x7b);
    for (let round = 1; round <= 2; round++) {
      await until(() => sim.eventSocketInfo.counts.events === 1, 'a connection', 15000);
      sim.publishRawFrame('events', huge);
      await until(
        () => connection.filter((m) => (m.payload as Msg).state === 'disconnected').length === round,
        'the refusal',
        15000,
      );
    }
    const reasons = connection
      .filter((m) => (m.payload as Msg).state === 'disconnected')
      .map((m) => String((m.payload as Msg).reason));
    assert.ok(
      reasons.every((r) => /a frame larger than 1 MiB was refused/.test(r)),
      reasons.join(' | '),
    );
    const logged = (helper as unknown as { log(): { args: { level: number; msg: unknown }[][] } })
      .log()
      .args.map((a) => a[0])
      .filter((c) => /frame larger than 1 MiB/.test(String(c.msg)));
    assert.equal(logged.length, 1, 'said once');
    assert.equal(events.length, 0, 'no oversized frame was emitted');
  });
});

describe('a flood of pushed frames, in Node-RED', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it('2,000 frames on instincterrors cost at most the burst plus one poll per refill, and the last frame is still followed by a poll', async function () {
    const server = bServerFlow(sim, { withB: false });
    await loadFlow(
      [...server.nodes, { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 60, wires: [[], [], []] }],
      server.credentials,
    );
    await until(() => sim.eventSocketInfo.counts.errors === 1, 'the errors socket', 15000);
    await until(() => sim.requests.filter((r) => r.path === ERROR_POLL).length >= 1, 'the first poll', 15000);
    const before = sim.requests.filter((r) => r.path === ERROR_POLL).length;
    const started = Date.now();
    for (let i = 0; i < 2000; i++) {
      sim.publishRawFrame(
        'errors',
        JSON.stringify({ code: 'RuntimeErrorResolved', description: '', data: JSON.stringify({ id: `gone-${i}` }) }),
      );
      if (i % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    const last = Date.now(); // the last frames were folded: a poll must still follow them
    await until(() => sim.requests.some((r) => r.path === ERROR_POLL && r.time >= last), 'a poll after the flood', 15000);
    // the allowance grows with the time measured in this run (a busy machine takes longer and may refill more): a
    // bound relative to this run, not to a quiet machine's speed
    const elapsed = Date.now() - started;
    const polls = sim.requests.filter((r) => r.path === ERROR_POLL).length - before;
    assert.ok(
      polls <= PUSH_POLL_BURST + Math.ceil(elapsed / PUSH_POLL_REFILL_MS) + 1,
      `${polls} polls for 2,000 frames in ${elapsed} ms`,
    );
  });
});

describe('live polls: at once, folded, within budget (fake clock, the real PollLoop)', function () {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(
    () =>
      (clock = FakeTimers.install({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'] })),
  );
  afterEach(() => clock.uninstall());

  interface Run {
    starts: number[];
    ends: number[];
    live: LivePolls;
    loop: PollLoop;
  }

  /** A loop whose polls take `durations` (ms, cycled) and whose regular poll is an hour away: every poll is a live one. */
  function run(durations: number[]): Run {
    const starts: number[] = [];
    const ends: number[] = [];
    let n = 0;
    const loop = new PollLoop(async () => {
      starts.push(Date.now());
      await new Promise((r) => setTimeout(r, durations[n++ % durations.length]));
      ends.push(Date.now());
      return 3_600_000;
    });
    return { starts, ends, loop, live: new LivePolls(loop, new PollBudget(PUSH_POLL_BURST, PUSH_POLL_REFILL_MS)) };
  }

  it('every frame is followed by a poll that starts after it: at once when none waits and a token is there, never later than the poll in flight plus a refill', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 }),
        async (gaps, durations) => {
          const r = run(durations);
          const frames: { at: number; idle: boolean; token: boolean }[] = [];
          for (const gap of gaps) {
            await clock.tickAsync(gap);
            const idle = r.starts.length === r.ends.length && !r.loop.pollPending;
            frames.push({ at: Date.now(), idle, token: true });
            r.live.frame();
          }
          await clock.tickAsync(10_000);
          r.live.stop();
          r.loop.stop();
          const longest = Math.max(...durations);
          for (const f of frames) {
            const next = r.starts.find((s) => s >= f.at);
            assert.ok(next !== undefined, `frame at ${f.at}: no poll after it (${r.starts})`);
            assert.ok(next - f.at <= longest + PUSH_POLL_REFILL_MS, `frame at ${f.at}, poll at ${next}`);
          }
          // the bucket: in any window, at most the burst plus one per refill
          for (let i = 0; i < r.starts.length; i++)
            for (let j = i; j < r.starts.length; j++)
              assert.ok(j - i + 1 <= PUSH_POLL_BURST + Math.floor((r.starts[j] - r.starts[i]) / PUSH_POLL_REFILL_MS) + 1);
          // never two at once
          for (let i = 1; i < r.starts.length; i++) assert.ok(r.starts[i] >= r.ends[i - 1]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a frame right after a poll polls at once (0.3 held it up to 25 ms)', async function () {
    const r = run([5]);
    r.live.frame();
    await clock.tickAsync(10); // that poll is done
    r.live.frame();
    await clock.tickAsync(0);
    assert.deepEqual(r.starts, [0, 10]);
    r.loop.stop();
  });

  it('a flood of 1,000 frames costs at most two polls at a time: the one in flight and one follow-up', async function () {
    const r = run([30]);
    r.live.frame(); // a poll in flight
    await clock.tickAsync(1);
    for (let i = 0; i < 1000; i++) r.live.frame();
    await clock.tickAsync(1000);
    assert.equal(r.starts.length, 2, 'the first poll, and one follow-up that sees every frame of the flood');
    assert.ok(r.starts[1] >= 30, 'the follow-up starts once the poll in flight is done');
    for (let i = 0; i < 1000; i++) r.live.frame(); // all at one moment with no poll in flight: one poll
    await clock.tickAsync(1000);
    assert.equal(r.starts.length, 3);
    r.loop.stop();
  });

  it('a reconnect polls at once however often it comes and whatever the bucket holds; a waiting push is served by it', async function () {
    const r = run([2]);
    for (let i = 0; i < 10; i++) {
      r.live.connected();
      await clock.tickAsync(5);
    }
    assert.deepEqual(
      r.starts,
      Array.from({ length: 10 }, (_, i) => i * 5),
    );
    r.live.frame(); // the bucket is empty: this push waits for a token...
    await clock.tickAsync(1);
    r.live.connected(); // ...and the reconnect's poll, starting after it, serves it
    await clock.tickAsync(PUSH_POLL_REFILL_MS * 2);
    assert.deepEqual(r.starts.slice(10), [51], 'one poll for both');
    r.loop.stop();
  });
});
