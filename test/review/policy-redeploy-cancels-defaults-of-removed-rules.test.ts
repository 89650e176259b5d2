/**
 * fix48.2: a redeploy that removes (or changes) the rule a pending default was decided by. The default stayed in the
 * book over the redeploy and went out at its deadline under a rule the lab had removed: a lab that removes a rule
 * expects its pending defaults gone. Now a deploy cancels a pending default whose rule (by id) is gone, no longer
 * matches the error, or whose step for the error is manual now or answers otherwise; the log says so once; a rule
 * kept as it was (moved, its delay or mode between semi-automatic and walk-away changed, a rule added above) keeps
 * its defaults, which go out as decided.
 *
 * Model-based over seeded random rule sets and redeploys: each rule of a two-step ladder is kept, moved, removed, has
 * one step's answer changed or made manual, stops matching, or changes its delay or mode; errors get step 1 or 2.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, loadFlow, serverFlow } from '../support/runtime';
import { answersSent } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
type Mutation = 'keep' | 'remove' | 'answer' | 'manual' | 'unmatch' | 'delay' | 'walk-away';

const SEEDS = [4802, 4812, 4822];
const RULES = 4;
const DELAY_S = 3;
const RESPONSES = ['Retry', 'Abort', 'Ignore'];

interface ModelRule {
  id: string;
  answers: [string, string];
  mutation: Mutation;
  /** the step (1 or 2) an answer or manual mutation changes */
  step: 1 | 2;
}

describe('review: a redeploy that removes or changes the rule of a pending default', function () {
  this.timeout(120000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  const puts = (): Msg[] => answersSent<Msg>(sim);

  function ruleOf(m: ModelRule, i: number, after: boolean): Msg {
    const steps = m.answers.map((answer, s) => {
      let step: Msg = { mode: 'semi-automatic', answer, delay: DELAY_S };
      if (!after) return step;
      if (m.mutation === 'answer' && s + 1 === m.step) step = { ...step, answer: RESPONSES.find((r) => r !== answer) };
      if (m.mutation === 'manual' && s + 1 === m.step) step = { mode: 'manual', answer: '', delay: 0 };
      if (m.mutation === 'delay') step = { ...step, delay: DELAY_S + 60 };
      if (m.mutation === 'walk-away') step = { ...step, mode: 'walk-away' };
      return step;
    });
    const pattern = after && m.mutation === 'unmatch' ? `^Z${i} ` : `^T${i} `;
    return { id: m.id, source: 'A', minSeverity: '', pattern, code: '', steps };
  }

  function policyWarnings(): string[] {
    const log = helper.log() as unknown as { args: [Msg][] };
    return log.args
      .map(([entry]) => entry)
      .filter((entry) => entry.type === 'lh-error-policy' && entry.level === 30)
      .map((entry) => String(entry.msg));
  }

  for (const seed of SEEDS) {
    it(`cancels exactly the defaults whose rule is gone or answers otherwise, logged once (seed ${seed})`, async function () {
      const rng = new Rng(seed);
      const mutations: Mutation[] = ['keep', 'remove', 'answer', 'manual', 'unmatch', 'delay', 'walk-away'];
      const model: ModelRule[] = Array.from({ length: RULES }, (_, i) => ({
        id: `rule-${i}`,
        answers: [RESPONSES[rng.below(3)], RESPONSES[rng.below(3)]],
        mutation: mutations[rng.below(mutations.length)],
        step: rng.next() < 0.5 ? 1 : 2,
      }));
      const server = serverFlow(sim, { withB: false });
      const flow = (rules: Msg[]): Msg[] => [
        ...server.nodes,
        { id: 'policy', type: 'lh-error-policy', server: 'server', rules, wires: [['notify'], ['auto'], ['escalate']] },
        { id: 'notify', type: 'helper' },
        { id: 'auto', type: 'helper' },
        { id: 'escalate', type: 'helper' },
      ];
      await loadFlow(flow(model.map((m, i) => ruleOf(m, i, false))), server.credentials);
      // errors: one or two per rule (the second gets step 2 of the ladder)
      const errors: { id: string; rule: number; step: 1 | 2 }[] = [];
      const notified = collect(helper.getNode('notify'));
      for (let i = 0; i < RULES; i++) {
        const count = rng.next() < 0.5 ? 1 : 2;
        for (let n = 1; n <= count; n++) {
          const e = sim.injectPendingError({ title: `T${i} error ${n}` });
          helper.getNode('policy').receive({ payload: e, source: 'A', event: 'raised' });
          errors.push({ id: e.id, rule: i, step: n as 1 | 2 });
        }
      }
      await until(() => notified.length === errors.length, 'every error notified');
      for (const m of notified) assert.equal((m.policy as Msg).mode, 'semi-automatic');
      const warningsBefore = policyWarnings().length;

      // the redeploy: rules mutated, removed ones left out, the order shuffled and a rule added above
      const after = model
        .map((m, i) => ({ m, i }))
        .filter(({ m }) => m.mutation !== 'remove')
        .map(({ m, i }) => ruleOf(m, i, true));
      for (let k = after.length - 1; k > 0; k--) {
        const j = rng.below(k + 1);
        [after[k], after[j]] = [after[j], after[k]];
      }
      after.unshift({
        id: 'new',
        source: 'A',
        minSeverity: '',
        pattern: '^NEW ',
        code: '',
        steps: [{ mode: 'walk-away', answer: 'Abort', delay: 0 }],
      });
      await helper.setFlows(flow(after), 'nodes', server.credentials);

      const cancelled = (e: { rule: number; step: 1 | 2 }): boolean => {
        const m = model[e.rule];
        if (m.mutation === 'remove' || m.mutation === 'unmatch') return true;
        return (m.mutation === 'answer' || m.mutation === 'manual') && m.step === e.step;
      };
      await new Promise((r) => setTimeout(r, (DELAY_S + 1.5) * 1000));
      const what = `seed ${seed}: ${model.map((m) => `${m.id} ${m.mutation}@${m.step}`).join(', ')}`;
      for (const e of errors) {
        const sent = puts().filter((p) => p.id === e.id);
        const expected = model[e.rule].answers[e.step - 1];
        if (cancelled(e)) assert.equal(sent.length, 0, `${what}: error of rule ${e.rule} step ${e.step} was answered`);
        else {
          assert.equal(sent.length, 1, `${what}: error of rule ${e.rule} step ${e.step} was not answered`);
          assert.equal(sent[0].selectedResponse, expected, what);
        }
      }
      // one warning for the deploy (the test runtime has no message catalog: the key stands for the text)
      const warnings = policyWarnings()
        .slice(warningsBefore)
        .filter((w) => /staleDefaults|cancelled/.test(w));
      assert.equal(warnings.length, errors.some(cancelled) ? 1 : 0, `${what}: ${warnings.join(' | ')}`);
    });
  }
});
