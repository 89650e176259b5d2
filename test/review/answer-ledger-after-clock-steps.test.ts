/**
 * The answer ledger (src/client/answer-ledger.ts) against the wall clock stepping (an NTP step, a VM resumed): an
 * answer is over once a list asked for after it no longer shows its error (its id may then come back as a new error),
 * and an answer given while a list was out is kept. Drawn histories of lists asked for and answered, answers and clock
 * steps (back and forward, minutes to days, and a clock jittering back 1 ms per reading) against the model "by the
 * order of events", then the case over real HTTP: an instrument that reuses the id of an error answered before the
 * clock went back. LH_SEED / LH_CASES replay or extend the drawn histories.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { AnswerLedger } from '../../src/client/answer-ledger';
import { useClients } from '../support/client-suite';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 300;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

type Step = 'back' | 'forward' | 'jitter' | 'wait';

function moveClock(clock: ReturnType<typeof FakeTimers.install>, rng: Rng, what: Step): string {
  if (what === 'wait') {
    const ms = rng.int(0, 2000);
    clock.tick(ms);
    return `wait ${ms}`;
  }
  const by = what === 'jitter' ? -1 : (what === 'back' ? -1 : 1) * rng.pick([MIN, 10 * MIN, HOUR, DAY, 3 * DAY]);
  clock.setSystemTime(Date.now() + by);
  return `${what} ${by}`;
}

describe('review: the answer ledger after the wall clock steps', function () {
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  it(`forgets an answer exactly when a list asked for after it no longer shows its error (seed ${SEED}, ${CASES} cases)`, function () {
    console.log(`      clock-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      clock?.uninstall();
      clock = FakeTimers.install({ toFake: ['Date'], now: Date.parse('2026-11-24T10:00:00.000Z') });
      const ledger = new AnswerLedger(); // the wall clock, as every instrument's home makes it
      // the model: the order of events; a list asked for at `asked` forgets answers confirmed before it
      let order = 0;
      const confirmedAt = new Map<string, number>();
      const lists: { asked: number; stamp: number }[] = [];
      const trace: string[] = [];
      for (let i = 0; i < 30; i++) {
        const what = rng.weighted({ answer: 3, ask: 2, listed: 2, back: 1, forward: 1, jitter: 2, wait: 2 });
        if (what === 'answer') {
          const key = `e${rng.below(4)}`;
          if (ledger.lookup(key)) continue;
          ledger.reserve(key, 'Retry', 'answer-error').confirm();
          confirmedAt.set(key, ++order);
          trace.push(`answer ${key}`);
        } else if (what === 'ask') {
          lists.push({ asked: ++order, stamp: ledger.stamp() });
          trace.push('ask');
        } else if (what === 'listed') {
          const list = lists.shift();
          if (!list) continue;
          // the list shows none of the errors answered: each answered before it was asked for is over
          ledger.forgetOver(new Set(), list.stamp);
          for (const [key, at] of confirmedAt) if (at < list.asked) confirmedAt.delete(key);
          trace.push('listed');
          for (const key of ['e0', 'e1', 'e2', 'e3']) {
            const kept = ledger.lookup(key) !== undefined;
            assert.equal(
              kept,
              confirmedAt.has(key),
              `seed ${SEED} case ${c}: ${key} ${kept ? 'still blocks a new error under its id' : 'forgotten while a list was out: a second answer may go'}: ${trace.join(', ')}`,
            );
          }
        } else trace.push(moveClock(clock, rng, what));
      }
    }
  });

  describe('over HTTP', function () {
    const suite = useClients();

    for (const back of [MIN, HOUR, 3 * DAY]) {
      it(`an id the instrument reuses after an error answered ${back / MIN} min of clock ago is answered again`, async function () {
        clock = FakeTimers.install({ toFake: ['Date'], now: Date.parse('2026-11-24T10:00:00.000Z') });
        const client = suite.make();
        const first = suite.sim.injectPendingError({ id: '7', title: 'Clot' });
        await client.prep.answerRuntimeError({
          id: first.id,
          groupId: first.groupId,
          selectedResponse: 'Retry',
          errorData: [{ id: first.id, selectedResponse: 'Retry' }],
        });
        clock.setSystemTime(Date.now() - back);
        assert.equal((await client.prep.pendingErrors()).length, 0, 'the answered error is over');
        suite.sim.reset(); // the instrument restarted: its ids start again
        const second = suite.sim.injectPendingError({ id: '7', title: 'Door open' });
        // a flow that answers by id alone (no identity): only the ledger can tell the old answer is over
        await client.prep.answerRuntimeError({
          id: second.id,
          groupId: second.groupId,
          selectedResponse: 'Abort',
          errorData: [{ id: second.id, selectedResponse: 'Abort' }],
        });
        assert.equal(client.answers.lookup('7')?.response, 'Abort');
      });
    }
  });
});
