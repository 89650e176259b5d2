/**
 * A semi-automatic default under coordination (lh-coordination, real Redis) while the holder's wall clock steps
 * forward (an NTP step, a VM resumed). The holder schedules the default in Redis under its wall-clock deadline and
 * sweeps the schedule every second for defaults due by Date.now() (those of a holder that died). A step forward made
 * that sweep take the holder's own default at once and answer it before the deadline the person was told ("unless
 * someone answers by ..."); the default's own timer (monotonic) is what sends it on time. Drawn clock histories (a
 * step forward of minutes to days, with or without 1 ms jitter back and a step back after it): the answer goes out
 * once, never before its delay has elapsed. LH_SEED / LH_CASES replay or extend them.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { collect, helper, loadFlow, serverFlow } from '../support/runtime';
import { answersSent } from '../support/sim-requests';

type Msg = Record<string, unknown>;

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 1;
const MIN = 60_000;
const DELAY_S = 4;

/** Waits on the monotonic clock (Date is faked and stepped here): until `check` holds or `ms` passed. */
async function waitReal(check: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await new Promise((r) => setTimeout(r, 5));
}

describeWithRedis("review: a coordinated default after the holder's wall clock steps forward", function () {
  this.timeout(30000 * CASES);
  // the simulator runs in this process, on the Date faked here: its tokens would expire with the holder's steps (a
  // second refusal within 10 s of a login is not logged in again for, by design), which the instrument's own clock
  // never did; a lifetime beyond every drawn history keeps the instrument's session out of the case
  const sim = useInstrument({ simulator: { tokenLifetimeSeconds: 30 * 24 * 3600 }, afterEach: () => restartMemory() });
  const db = useRedis();
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it(`is answered once, never before its delay, whatever the wall clock did (seed ${SEED}, ${CASES} case(s))`, async function () {
    console.log(`      clock-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    const server = serverFlow(sim, { withB: false, config: { coordination: 'coord' } });
    const rule = { id: 'semi', source: 'A', steps: [{ mode: 'semi-automatic', answer: 'Retry', delay: DELAY_S }] };
    await loadFlow(
      [
        { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix: `lh-sweep-step-${process.pid}`, leaseSeconds: 2 },
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [['policy'], ['policy'], []] },
        { id: 'policy', type: 'lh-error-policy', server: 'server', rules: [rule], wires: [['notify'], ['auto'], ['escalate']] },
        { id: 'notify', type: 'helper' },
        { id: 'auto', type: 'helper' },
        { id: 'escalate', type: 'helper' },
      ],
      server.credentials,
    );
    const role = (): string =>
      (helper.getNode('server') as unknown as { coordination: { state: { role: string } } }).coordination.state.role;
    await waitReal(() => role() === 'holder', 20_000);
    assert.equal(role(), 'holder');
    const notify = collect(helper.getNode('notify'));
    clock = FakeTimers.install({ toFake: ['Date'], now: Date.now(), shouldAdvanceTime: true });

    for (let c = 0; c < CASES; c++) {
      const e = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
      await waitReal(() => notify.some((m) => (m.payload as Msg).id === e.id), 10_000);
      const told = notify.find((m) => (m.payload as Msg).id === e.id);
      assert.ok(told, 'the error notified with its deadline');
      const decided = performance.now();
      const trace: string[] = [];
      const forward = rng.pick([2 * MIN, 10 * MIN, 60 * MIN, 24 * 60 * MIN, 3 * 24 * 60 * MIN]);
      clock.setSystemTime(Date.now() + forward);
      trace.push(`forward ${forward}`);
      for (let j = rng.below(4); j > 0; j--) {
        clock.setSystemTime(Date.now() - 1);
        trace.push('jitter -1');
      }
      if (rng.chance(0.3)) {
        const back = rng.int(1, forward);
        clock.setSystemTime(Date.now() - back);
        trace.push(`back ${back}`);
      }
      const sentFor = (): Msg[] => answersSent<Msg>(sim).filter((b) => b.id === e.id);
      await waitReal(() => sentFor().length > 0, DELAY_S * 1000 + 10_000);
      const after = performance.now() - decided;
      assert.equal(sentFor().length, 1, `seed ${SEED} case ${c} (${trace.join(', ')}): answered once`);
      // the notification said "unless someone answers by" the deadline: not a moment before (less the poll's lag)
      assert.ok(
        after >= DELAY_S * 1000 - 400,
        `seed ${SEED} case ${c} (${trace.join(', ')}): answered after ${Math.round(after)} ms of ${DELAY_S * 1000}`,
      );
      await waitReal(() => false, 1500); // a second sweep or timer would send it again
      assert.equal(sentFor().length, 1, `seed ${SEED} case ${c}: answered once`);
    }
  });
});
