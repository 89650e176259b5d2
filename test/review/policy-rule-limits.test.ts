/**
 * review43: the error policy's rules at their limits. A pattern is matched in linear time on at most 4,096 characters,
 * but the number of rules had no bound: each raised error is matched against every rule (twice), so a flow of
 * thousands of rules (written by a script) held the event loop for seconds per error (5,000 rules of `(a+)+c$`
 * on a 10 kB title: 1.2 s per match here). A policy now has at most 200 rules, more are refused at deploy naming the
 * field; 200 catastrophic patterns on a 10 kB title decide at once; an error with no title, message or code is
 * matched like any other.
 */
import assert from 'node:assert/strict';

import { loadWithPage } from '../nodes/lh-answer-page.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, nextMessage, serverFlow } from '../support/runtime';
import { answersSent } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: error policy rules at their limits', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  const puts = (): Msg[] => answersSent<Msg>(sim);

  async function load(rules: Msg[]): Promise<void> {
    const server = serverFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        { id: 'policy', type: 'lh-error-policy', server: 'server', rules, wires: [['notify'], ['auto'], ['escalate']] },
        { id: 'notify', type: 'helper' },
        { id: 'auto', type: 'helper' },
        { id: 'escalate', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['policy'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
  }

  /** A rule that never matches a text of a's, after backtracking a RegExp could not finish on 4 kB of them. */
  const catastrophic = (i: number): Msg => ({
    id: `slow-${i}`,
    source: 'A',
    pattern: `(a+)+c${i}$`,
    steps: [{ mode: 'walk-away', answer: 'Abort', delay: 0 }],
  });
  const retry: Msg = { id: 'last', source: 'A', pattern: '', steps: [{ mode: 'walk-away', answer: 'Retry', delay: 0 }] };

  it('more than 200 rules are refused at deploy naming the field; nothing is sent', async function () {
    await load([...Array.from({ length: 200 }, (_, i) => catastrophic(i)), retry]);
    const caught = nextMessage(helper.getNode('caught'));
    const error = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] }) as unknown as Msg;
    helper.getNode('policy').receive({ payload: error, source: 'A', event: 'raised' });
    assert.match(String(((await caught).error as Msg).message), /rules must be at most 200 rules \(got 201\)/);
    assert.equal(puts().length, 0);
  });

  it('200 catastrophic patterns on a 10 kB title and message decide at once; the last rule answers', async function () {
    await load([...Array.from({ length: 199 }, (_, i) => catastrophic(i)), retry]);
    const auto = collect(helper.getNode('auto'));
    const text = `${'a'.repeat(10_000)}!`;
    const error = sim.injectPendingError({ title: text, message: text, responses: ['Retry', 'Abort'] }) as unknown as Msg;
    const started = performance.now();
    helper.getNode('policy').receive({ payload: error, source: 'A', event: 'raised' });
    const held = performance.now() - started; // the decision is synchronous up to the answer's request
    await until(() => auto.length === 1, 'the walk-away answer', 10_000);
    assert.equal((auto[0].payload as Msg).ruleId, 'last');
    assert.deepEqual(
      puts().map((p) => p.selectedResponse),
      ['Retry'],
    );
    // a safety net for a hang, not a speed test: linear matching of 200 rules takes tens of milliseconds
    assert.ok(held < 3000, `the event loop was held ${Math.round(held)} ms`);
  });

  it('an error with no title, message or code: a rule with a pattern or a code passes it by, one without matches', async function () {
    await load([
      { id: 'by-code', source: 'A', code: '1042', steps: [{ mode: 'walk-away', answer: 'Abort', delay: 0 }] },
      { id: 'by-text', source: 'A', pattern: '.', steps: [{ mode: 'walk-away', answer: 'Abort', delay: 0 }] },
      retry,
    ]);
    const auto = collect(helper.getNode('auto'));
    const caught = collect(helper.getNode('caught'));
    const error = sim.injectPendingError({ title: '', message: '', responses: ['Retry', 'Abort'] }) as unknown as Msg;
    const bare: Msg = { id: error.id, errorResponses: error.errorResponses, groupId: error.groupId };
    helper.getNode('policy').receive({ payload: bare, source: 'A', event: 'raised' });
    await until(() => auto.length === 1 || caught.length > 0, 'the decision');
    assert.equal(caught.length, 0, JSON.stringify(caught.map((m) => m.error)));
    assert.equal((auto[0].payload as Msg).ruleId, 'last');
    assert.deepEqual(
      puts().map((p) => p.selectedResponse),
      ['Retry'],
    );
  });
});
