/**
 * Review finding (answering surface, B): msg.uuid alone (no error in msg.payload) in another letter case than the
 * instrument lists it — a chat reply typed in capitals, a system writing GUIDs upper-case — was kept in the answer
 * ledger under that spelling, a key of its own beside the error's: two answers to one error, one by each spelling,
 * both went out (the instrument matches a uuid in any letter case); the uuid-alone answer also found no identity for
 * the error it answered (the list was compared letter for letter). review23 fixed the case with the error in
 * msg.payload; this is the case without it. A uuid given alone now takes the spelling the instrument lists (else its
 * lower-case form, a UUID's canonical one), so every path keys one error once.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, nextMessage } from '../support/runtime';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

/** The uuid with each letter's case drawn at random. */
function respell(rng: Rng, uuid: string): string {
  return [...uuid].map((ch) => (rng.chance(0.5) ? ch.toUpperCase() : ch.toLowerCase())).join('');
}

describe('review: lh-submit-recovery with msg.uuid alone in another letter case', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let submit: LoadedNode;

  const submissions = (): { path: string; body: unknown }[] =>
    sim.requests.filter((r) => r.api === 'B' && r.method === 'POST' && r.path.startsWith('/api/vector/v3/instrument-errors/'));

  beforeEach(async function () {
    sim.state.handlers.add('nodered1');
    submit = await loadNode(sim, { id: 'submit', type: 'lh-submit-recovery', kind: 'recovery' }, { server: { withB: true } });
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
