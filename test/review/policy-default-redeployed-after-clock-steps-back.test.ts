/**
 * A semi-automatic default pending over a redeploy of the error policy while the wall clock was set back (an NTP
 * step, a VM resumed). The default's timer measured its wait, but the redeployed node starts a new timer from the
 * deadline by Date.now(): set back a day, the default waited a day more than the person was told (and the
 * instrument's own timeout acted first). Drawn clock histories (a step back of minutes to days, with 1 ms jitter back
 * around it): the default goes out once, within its delay of the redeploy. LH_SEED replays them.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { loadWithPage } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper } from '../support/runtime';
import { answersSent } from '../support/sim-requests';

type Msg = Record<string, unknown>;

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const MIN = 60_000;
const DELAY_S = 2;

/** Waits on the monotonic clock (Date is faked and stepped here): until `check` holds or `ms` passed. */
async function waitReal(check: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await new Promise((r) => setTimeout(r, 5));
}

describe('review: a pending default redeployed after the wall clock went back', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it(`is answered once within its delay of the redeploy (seed ${SEED})`, async function () {
    console.log(`      clock-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    const server = bServerFlow(sim);
    const rule = { id: 'semi', source: 'A', steps: [{ mode: 'semi-automatic', answer: 'Retry', delay: DELAY_S }] };
    const nodes = [
      ...server.nodes,
      {
        id: 'policy',
        type: 'lh-error-policy',
        version: 3,
        server: 'server',
        rules: [rule],
        wires: [['notify'], ['auto'], ['escalate']],
      },
      { id: 'notify', type: 'helper' },
      { id: 'auto', type: 'helper' },
      { id: 'escalate', type: 'helper' },
    ];
    clock = FakeTimers.install({ toFake: ['Date'], now: Date.now(), shouldAdvanceTime: true });
    await loadWithPage(nodes, server.credentials);
    const notify = collect(helper.getNode('notify'));
    const e = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    (helper.getNode('policy') as unknown as { receive(m: Msg): void }).receive({ payload: e, source: 'A', event: 'raised' });
    await waitReal(() => notify.length > 0, 5000);
    assert.ok(notify[0]?.deadline, 'the default is pending, its deadline told');

    const trace: string[] = [];
    const jitter = (): void => {
      for (let j = rng.below(3); j > 0; j--) {
        clock!.setSystemTime(Date.now() - 1);
        trace.push('jitter -1');
      }
    };
    jitter();
    const back = rng.pick([2 * MIN, 10 * MIN, 60 * MIN, 24 * 60 * MIN, 3 * 24 * 60 * MIN]);
    clock.setSystemTime(Date.now() - back);
    trace.push(`back ${back}`);
    jitter();

    await helper.setFlows(nodes, 'full', server.credentials); // a redeploy: a new instance of the policy node
    const redeployed = performance.now();
    const sentFor = (): Msg[] => answersSent<Msg>(sim).filter((b) => b.id === e.id);
    await waitReal(() => sentFor().length > 0, DELAY_S * 1000 + 5000);
    const after = performance.now() - redeployed;
    assert.equal(sentFor().length, 1, `seed ${SEED} (${trace.join(', ')}): answered, once`);
    assert.ok(
      after < DELAY_S * 1000 + 1500,
      `seed ${SEED} (${trace.join(', ')}): answered ${Math.round(after)} ms after the redeploy`,
    );
  });
});
