/**
 * review52: the answer page's form reads at most 50 fields and dropped the rest without a word. A browser posts every
 * field of the form (the link and form tokens, the state, the name, one choice per item, every action's inputs), so on
 * an A error with many items offering their own answers (a channel each) the choices past the 50th were lost and
 * those items got the button's answer, which the operator had not chosen for them; on a B error with many inputs the
 * chosen action's values past the 50th went missing (the instrument's own default used instead). The page now reads
 * every field the error's page has, and a form with more fields than that is refused, nothing sent.
 *
 * Seeded over A errors of 1 to 70 items (each choice left "as the answer below" or set) and B errors of 2 to 4
 * actions with up to 20 inputs each, the form posted as a browser does (every field, in the order of the page).
 */
import assert from 'node:assert/strict';

import { fetchText, formOf, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { Rng } from '../support/prng';
import { helper, nextMessage } from '../support/runtime';
import { answersSent, recoverySubmissions } from '../support/sim-requests';

type Msg = Record<string, unknown>;

const SEED = 5201;
const CASES = 12;

describe('review: the answer page reads every field of its form', function () {
  this.timeout(120000);
  const { sim, pageNode } = usePageSuite();

  const puts = (): Msg[] => answersSent<Msg>(sim);
  const submissions = (): Msg[] => recoverySubmissions(sim).map((r) => r.body as Msg);

  async function linkOf(source: 'A' | 'B', key: string): Promise<string> {
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: source === 'A' ? { id: key } : { uuid: key }, source, event: 'raised' });
    return String((await out).answerUrl);
  }

  it(`answers each item and input as the form chose, however many (seed ${SEED}, ${CASES} cases)`, async function () {
    const server = bServerFlow(sim);
    await loadWithPage([...server.nodes, pageNode({ path: '/lh-answer', wires: [['out'], []] }), { id: 'out', type: 'helper' }], {
      ...server.credentials,
      page: { secret: 'every-field-secret' },
    });
    sim.state.handlers.add('nodered1');
    const rng = new Rng(SEED);
    for (let i = 0; i < CASES; i++) {
      const source: 'A' | 'B' = i % 2 === 0 ? 'A' : 'B';
      if (source === 'A') {
        const main = ['Retry', 'Abort', 'Ignore'];
        const own = [...main, 'Skip channel'];
        const count = i === 0 ? 70 : rng.int(1, 70);
        const error = sim.injectPendingError({
          title: `Many items ${i}`,
          responses: main,
          errorData: Array.from({ length: count }, (_, k) => ({ id: `ch${k}`, description: `Channel ${k}`, responses: own })),
        });
        const link = await linkOf('A', error.id);
        const page = await fetchText(link);
        const form = formOf(page.text);
        const picks = Array.from({ length: count }, (_, k) => (k === count - 1 || rng.next() < 0.3 ? 3 : -1));
        // as a browser posts it: every field in the order of the page, the button pressed last
        const body: Record<string, string> = { t: form.t, form: form.form, o: form.o, by: '' };
        picks.forEach((p, k) => (body[`item.#${k}`] = p < 0 ? '' : `#${p}`));
        body.response = '#0';
        const before = puts().length;
        const reply = await fetchText(link.split('?')[0], { form: body });
        const what = `case ${i}: A, ${count} items`;
        assert.equal(reply.status, 200, `${what}: ${reply.text.slice(0, 400)}`);
        const sent = puts().slice(before);
        assert.equal(sent.length, 1, what);
        const items = sent[0].errorData as Msg[];
        picks.forEach((p, k) => {
          const item = items.find((x) => x.id === `ch${k}`);
          assert.equal(item?.selectedResponse, p < 0 ? 'Retry' : own[p], `${what}: item ${k}`);
        });
      } else {
        const actionCount = rng.int(2, 4);
        const actions = Array.from({ length: actionCount }, (_, a) => ({
          id: a + 1,
          description: `Action ${a + 1}`,
          isRecovery: true,
          isDefault: a === 0,
          inputs: Array.from({ length: i === 1 ? 20 : rng.int(0, 20) }, (_, k) => ({
            id: k + 1,
            description: `Value ${k + 1}`,
            type: 'text' as const,
            required: false,
          })),
        }));
        const error = sim.injectInstrumentError({ title: `Many inputs ${i}`, actions, defaultActionId: 1 });
        const chosen = i === 1 ? actionCount - 1 : rng.below(actionCount);
        const link = await linkOf('B', error.uuid);
        const page = await fetchText(link);
        const form = formOf(page.text);
        const body: Record<string, string> = { t: form.t, form: form.form, o: form.o, by: '' };
        const expected: { id: number; value: string }[] = [];
        actions.forEach((action, a) => {
          for (const input of action.inputs) {
            const value = a === chosen ? `v${a}-${input.id}` : rng.next() < 0.5 ? '' : `other${input.id}`;
            body[`input.#${a}.${input.id}`] = value;
            if (a === chosen) expected.push({ id: input.id, value });
          }
          if (a === chosen) body.action = `#${a}`;
        });
        const before = submissions().length;
        const reply = await fetchText(link.split('?')[0], { form: body });
        const what = `case ${i}: B, ${actionCount} actions, action ${chosen + 1} with ${expected.length} inputs`;
        assert.equal(reply.status, 200, `${what}: ${reply.text.slice(0, 400)}`);
        const sent = submissions().slice(before);
        assert.equal(sent.length, 1, what);
        assert.equal(sent[0].selectedActionId, chosen + 1, what);
        const inputs = ((sent[0].inputs as { id: number; value: string }[] | undefined) ?? []).slice();
        inputs.sort((x, y) => x.id - y.id);
        assert.deepEqual(inputs, expected, what);
      }
    }
  });

  it('refuses a form with more fields than its page has, and sends nothing', async function () {
    const server = bServerFlow(sim);
    await loadWithPage([...server.nodes, pageNode({ path: '/lh-answer', wires: [['out'], []] }), { id: 'out', type: 'helper' }], {
      ...server.credentials,
      page: { secret: 'every-field-secret' },
    });
    const error = sim.injectPendingError({ title: 'Few items', responses: ['Retry', 'Abort'] });
    const link = await linkOf('A', error.id);
    const form = formOf((await fetchText(link)).text);
    const body: Record<string, string> = { t: form.t, form: form.form, o: form.o, by: '' };
    for (let k = 0; k < 200; k++) body[`junk${k}`] = 'x';
    body.response = '#0';
    const before = puts().length;
    const reply = await fetchText(link.split('?')[0], { form: body });
    assert.equal(puts().length, before, 'sent an answer from a form the page never showed');
    assert.match(reply.text, /more fields/);
  });
});
