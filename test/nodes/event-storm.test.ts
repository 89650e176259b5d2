/**
 * Issue 17.4 in a real Node-RED runtime: an instrument that accepts every websocket upgrade and closes it at once
 * (92 upgrades per channel, 94 error-list and 92 run-status polls and 184 connection msgs in 5 s before the fix)
 * now costs a bounded handful of each. And the connect-poll cap as a property over generated connect times.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import { ConnectPolls, PUSH_POLL_GAP_MS, PushPolls } from '../../src/nodes/shared/connect-polls';
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
      assert.ok(n <= 2, `${n} upgrades on ${channel} (92 before)`);
    }
    // the first poll, at most one connect-poll, at most one regular poll at 5 s
    assert.ok(count(ERROR_POLL) <= 3, `${count(ERROR_POLL)} error-list polls (94 before)`);
    assert.ok(count(RUN_POLL) <= 3, `${count(RUN_POLL)} run-status polls (92 before)`);
    assert.ok(connection.length <= 4, `${connection.length} connection msgs (184 before)`);
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

  it('2,000 frames on instincterrors cost at most one poll per push-poll gap (25 ms), and the last frame is still followed by a poll', async function () {
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
    const elapsed = Date.now() - started;
    const polls = sim.requests.filter((r) => r.path === ERROR_POLL).length - before;
    assert.ok(polls <= Math.ceil(elapsed / PUSH_POLL_GAP_MS) + 2, `${polls} polls for 2,000 frames in ${elapsed} ms`);
  });
});

describe('push-poll cap (property)', function () {
  it('polls spaced at least the gap (25 ms) apart, and every frame followed by a poll within the gap', function () {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 600 }), { minLength: 1, maxLength: 100 }), (gaps) => {
        const clock = FakeTimers.createClock(0);
        const polls: number[] = [];
        const gate = new PushPolls(
          () => polls.push(clock.now),
          PUSH_POLL_GAP_MS,
          () => clock.now,
        );
        const frames: number[] = [];
        const original = { setTimeout: global.setTimeout, clearTimeout: global.clearTimeout };
        Object.assign(global, { setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout });
        try {
          for (const gap of gaps) {
            clock.tick(gap);
            frames.push(clock.now);
            gate.request();
          }
          clock.tick(PUSH_POLL_GAP_MS);
        } finally {
          Object.assign(global, original);
        }
        for (let i = 1; i < polls.length; i++) assert.ok(polls[i] - polls[i - 1] >= PUSH_POLL_GAP_MS, `${polls}`);
        for (const f of frames)
          assert.ok(
            polls.some((p) => p >= f && p - f <= PUSH_POLL_GAP_MS),
            `frame at ${f}: polls ${polls}`,
          );
      }),
    );
  });
});

describe('connect-poll cap (property)', function () {
  it('never more than one connect-poll per interval, and a connect after a quiet interval always polls', function () {
    fc.assert(
      fc.property(
        fc.integer({ min: 500, max: 60_000 }),
        fc.array(fc.integer({ min: 0, max: 30_000 }), { minLength: 1, maxLength: 200 }),
        (interval, gaps) => {
          let now = 0;
          const gate = new ConnectPolls(
            () => interval,
            () => now,
          );
          const polled: number[] = [];
          let last = Number.NEGATIVE_INFINITY;
          for (const gap of gaps) {
            now += gap;
            const allowed = gate.allow();
            if (now - last >= interval) assert.equal(allowed, true, 'a connect after a quiet interval polls');
            if (allowed) {
              polled.push(now);
              last = now;
            }
          }
          for (let i = 1; i < polled.length; i++) assert.ok(polled[i] - polled[i - 1] >= interval);
          // so over any window the connect-polls are bounded by window / interval + 1
          assert.ok(polled.length <= Math.floor(now / interval) + 1);
        },
      ),
    );
  });
});
