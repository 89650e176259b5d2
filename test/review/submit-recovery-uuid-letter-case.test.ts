/**
 * Review finding (answering surface, B): a uuid names one error in any letter case (the instrument matches it so:
 * `/instrument-errors/{uuid}/…` in upper case reaches the same error). lh-submit-recovery compared msg.uuid with the
 * error in msg.payload letter for letter: an upper-case msg.uuid (typed in a chat reply, or from a system that writes
 * GUIDs in capitals) skipped the check of the actions the error offers, skipped the check that the instrument still
 * lists that error, and was kept in the answer ledger under another key than the error's own, so a second answer to
 * the same error went out beside it. The uuid of the error in msg.payload is the one used when msg.uuid names it in
 * another letter case.
 *
 * And without the error in msg.payload (msg.uuid alone, review24): the uuid was kept in the answer ledger under its
 * own spelling, so two answers to one error, one by each spelling, both went out; it now takes the spelling the
 * instrument lists (else its lower-case form, a UUID's canonical one), so every path keys one error once.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, nextMessage } from '../support/runtime';
import { recoverySubmissions } from '../support/sim-requests';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

/** The uuid with each letter's case drawn at random. */
function respell(rng: Rng, uuid: string): string {
  return [...uuid].map((ch) => (rng.chance(0.5) ? ch.toUpperCase() : ch.toLowerCase())).join('');
}

describe('review: lh-submit-recovery with msg.uuid in another letter case', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let submit: LoadedNode;

  const submissions = (): { path: string; body: unknown }[] => recoverySubmissions(sim);

  beforeEach(async function () {
    sim.state.handlers.add('nodered1');
    submit = await loadNode(sim, { id: 'submit', type: 'lh-submit-recovery', kind: 'recovery' }, { server: { withB: true } });
  });

  it('refuses an action the error does not offer, naming the offered ones; nothing is sent', async function () {
    const injected = sim.injectInstrumentError();
    const details = await submit.expectFailure(
      { payload: injected, uuid: injected.uuid.toUpperCase(), selectedActionId: 99 },
      'selectedActionId',
      /must be one of the actions error .* offers/,
    );
    assert.equal(details.operation, 'submit-recovery');
    assert.equal(submissions().length, 0);
  });

  it('two answers to one error, its uuid in two letter cases: one goes out, the other is refused as already answered', async function () {
    const injected = sim.injectInstrumentError();
    const outs = collect(submit.out);
    const answered = nextMessage(submit.out);
    const refused = nextMessage(submit.caught);
    submit.node.receive({ payload: injected, selectedActionId: 1 });
    submit.node.receive({ payload: injected, uuid: injected.uuid.toUpperCase(), selectedActionId: 3 });
    assert.equal((await answered).outcome, 'answered');
    assert.equal((await refused).outcome, 'already-answered');
    assert.equal(submissions().length, 1, 'one submission reached the instrument');
    assert.equal(outs.length, 1);
    assert.equal(submissions()[0].path, `/api/vector/v3/instrument-errors/${injected.uuid}/recovery`);
  });

  it('property: two answers by uuid alone, in two spellings, at once: one goes out under the listed uuid', async function () {
    console.log(`      uuid-spelling seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    for (let n = 0; n < 6; n++) {
      const injected = sim.injectInstrumentError();
      const first = n === 0 ? injected.uuid.toUpperCase() : respell(rng, injected.uuid);
      const second = n === 0 ? injected.uuid : respell(rng, injected.uuid);
      const before = submissions().length;
      const outs = collect(submit.out);
      const answered = nextMessage(submit.out);
      const refused = nextMessage(submit.caught);
      submit.node.receive({ uuid: first, selectedActionId: 1 });
      submit.node.receive({ uuid: second, selectedActionId: 3 });
      const out = await answered;
      assert.equal(out.outcome, 'answered');
      assert.equal(out.uuid, injected.uuid, `seed ${SEED}: the answer names the error as listed`);
      assert.equal((await refused).outcome, 'already-answered', `seed ${SEED}: ${first} then ${second}`);
      const sent = submissions().slice(before);
      assert.equal(sent.length, 1, `seed ${SEED}: ${first} and ${second}: one submission reached the instrument`);
      assert.equal(sent[0].path, `/api/vector/v3/instrument-errors/${injected.uuid}/recovery`);
      assert.equal(outs.length, 1);
    }
  });
});
