/**
 * fix48.1: an automatic answer (a policy's walk-away answer, its semi-automatic default, a later step of a ladder)
 * that the instrument refused with a 409. Every 409 was taken for "someone answered first" and went to Catch nodes
 * as `already-answered`, while the error was still pending and the help says a refused automatic answer escalates:
 * nobody was told to act. Now a 409 is "already answered" only when the instrument says so or shows the error
 * handled; any other 409 is a refusal, escalated on output 3. An error someone else answered first is never
 * escalated (it still goes to Catch as `already-answered`, as the help says).
 *
 * Seeded over classes of cases: source A or B, a walk-away answer, a semi-automatic default of no delay or a ladder's
 * later step, and the error answered elsewhere first or the answer refused with a bare 409.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const SEED = 4801;
const CASES = 12;

describe('review: a 409 on an automatic answer for another reason than an answer given first', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  const rule = (id: string, source: 'A' | 'B', steps: Msg[]): Msg => ({
    id,
    source,
    minSeverity: '',
    pattern: '',
    code: '',
    steps,
  });

  it(`escalates a refused automatic answer and never one answered first (seed ${SEED}, ${CASES} cases)`, async function () {
    const server = serverFlow(sim, { withB: true });
    await loadFlow(
      [
        ...server.nodes,
        {
          id: 'policy',
          type: 'lh-error-policy',
          server: 'server',
          // A: a ladder (1st error walk-away, every later one a semi-automatic default of no delay); B: walk-away
          rules: [
            rule('a', 'A', [
              { mode: 'walk-away', answer: 'Retry', delay: 0 },
              { mode: 'semi-automatic', answer: 'Abort', delay: 0 },
            ]),
            rule('b', 'B', [{ mode: 'walk-away', answer: '', delay: 0 }]),
          ],
          wires: [['notify'], ['auto'], ['escalate']],
        },
        { id: 'notify', type: 'helper' },
        { id: 'auto', type: 'helper' },
        { id: 'escalate', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['policy'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
    sim.state.handlers.add('nodered1');
    const escalated = collect(helper.getNode('escalate'));
    const caught = collect(helper.getNode('caught'));
    const auto = collect(helper.getNode('auto'));
    const rng = new Rng(SEED);
    for (let i = 0; i < CASES; i++) {
      const source = rng.next() < 0.5 ? 'A' : 'B';
      const answeredFirst = rng.next() < 0.5;
      const what = `case ${i}: ${source}, ${answeredFirst ? 'answered elsewhere first' : 'a bare 409'}`;
      const error: Msg =
        source === 'A'
          ? (sim.injectPendingError({ title: `E${i}` }) as unknown as Msg)
          : (sim.injectInstrumentError({ title: `E${i}` }) as unknown as Msg);
      const key = String(source === 'A' ? error.id : error.uuid);
      if (answeredFirst) {
        // the operator answered on the instrument's screen before the policy's answer arrived
        if (source === 'A') sim.resolvePendingError(key);
        else sim.resolveInstrumentError(key);
      } else sim.setFaults({ statusRate: 1, statusCode: 409, methods: [source === 'A' ? 'PUT' : 'POST'] });
      const before = { escalated: escalated.length, caught: caught.length, auto: auto.length };
      helper.getNode('policy').receive({ payload: error, source, event: 'raised' });
      await until(() => escalated.length + caught.length + auto.length > before.escalated + before.caught + before.auto, what);
      sim.clearFaults();
      assert.equal(auto.length, before.auto, `${what}: reported answered`);
      if (answeredFirst) {
        assert.equal(escalated.length, before.escalated, `${what}: escalated an error someone else answered`);
        const m = caught[caught.length - 1];
        assert.equal(m.outcome, 'already-answered', what);
      } else {
        assert.equal(caught.length, before.caught, `${what}: went to Catch as ${String(caught[caught.length - 1]?.outcome)}`);
        const m = escalated[escalated.length - 1];
        assert.equal(m.outcome, 'refused', what);
        assert.equal((m.payload as Msg).errorKey, key, what);
        assert.match(String((m.payload as Msg).reason ?? m.reason), /refused the answer.*409.*still lists it as pending/, what);
        // still pending on the instrument: a person must act
        const pending =
          source === 'A'
            ? sim.state.pendingErrors.some((e) => e.id === key)
            : sim.state.instrumentErrors.some((e) => e.uuid === key && !e.handled);
        assert.ok(pending, `${what}: the error is still pending`);
        if (source === 'A') sim.resolvePendingError(key);
        else sim.resolveInstrumentError(key);
      }
    }
  });
});
