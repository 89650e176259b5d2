/**
 * fix48.4: the answer page put the instrument's response names, item responses, action ids and input suggestions
 * into its HTML form whole (button values, option values, field values), while it redacts the titles, messages and
 * action texts it shows: an instrument that echoes a secret into a response name (`Retry password=hunter2`), an item's
 * response or an input's suggested value sent it to whoever opened the link. The form now posts positions (`#0`, …)
 * and a signed state (the choices offered); the server maps them back through the error as it reads it afresh, so
 * the instrument still gets its own names and values. A form rendered before (no state, names posted) still answers;
 * a state that does not hold for the error's choices sends nothing.
 *
 * Seeded over A and B errors, the secret in a response, an item's response, an action text or an input's suggested
 * value, the answer pressed (the one with the secret or another), and the form posted as rendered now, as rendered
 * before, or with a state that does not hold.
 */
import assert from 'node:assert/strict';
import { inspect } from 'util';

import { buttonText, fetchText, formOf, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { Rng } from '../support/prng';
import { helper, nextMessage } from '../support/runtime';
import { answersSent, recoverySubmissions } from '../support/sim-requests';

type Msg = Record<string, unknown>;

const SEED = 4804;
const CASES = 40;
const NAMES = ['password', 'token', 'api_key', 'secret', 'pin'];

describe('review: the answer page form carries no name an instrument echoed a secret into', function () {
  this.timeout(60000);
  const { sim, pageWithOutputs } = usePageSuite();

  const puts = (): Msg[] => answersSent<Msg>(sim);
  const submissions = (): Msg[] => recoverySubmissions(sim).map((r) => r.body as Msg);

  it(`shows redacted labels, posts positions, and answers with the instrument's own names (seed ${SEED}, ${CASES} cases)`, async function () {
    const server = bServerFlow(sim);
    await loadWithPage([...server.nodes, ...pageWithOutputs()], {
      ...server.credentials,
      page: { secret: 'positions-test-secret' },
    });
    sim.state.handlers.add('nodered1');
    const rng = new Rng(SEED);
    for (let i = 0; i < CASES; i++) {
      const secret = `S3cr3t-${i}-${rng.int(100000, 999999)}`;
      const echoed = `${NAMES[rng.below(NAMES.length)]}=${secret}`;
      const source: 'A' | 'B' = rng.next() < 0.5 ? 'A' : 'B';
      const post = (['now', 'before', 'forged'] as const)[rng.below(3)];
      const where = source === 'A' ? (rng.next() < 0.6 ? 'response' : 'item') : rng.next() < 0.5 ? 'action' : 'input';
      const pressSecret = rng.next() < 0.6;
      const what = `case ${i}: ${source}, the secret in ${where}, ${pressSecret ? 'its' : 'another'} answer pressed, the form posted ${post}`;

      let error: Msg;
      let expected: (body: Msg) => void;
      let label: string; // the button pressed, as the page shows it
      let legacy: Record<string, string>; // the same answer as a form rendered before positions posted it
      let extra: Record<string, string> = {};
      if (source === 'A') {
        const responses = ['Retry', 'Abort', 'Ignore'];
        const at = rng.below(3);
        if (where === 'response') responses[at] = `${responses[at]} ${echoed}`;
        const itemResponses = where === 'item' ? [`Skip ${echoed}`, 'Retry', 'Abort', 'Ignore'] : undefined;
        error = sim.injectPendingError({
          title: `E${i}`,
          responses,
          ...(itemResponses ? { errorData: [{ id: `ch${i}`, description: 'Channel 1', responses: itemResponses }] } : {}),
        }) as unknown as Msg;
        const chosen = where === 'response' && pressSecret ? responses[at] : responses[(at + 1) % 3];
        label = chosen.replace(secret, '***');
        legacy = { response: chosen };
        if (itemResponses) {
          const item = pressSecret ? itemResponses[0] : chosen;
          extra = { 'item.#0': `#${itemResponses.indexOf(item)}` };
          legacy[`item.ch${i}`] = item;
        }
        expected = (body) => {
          assert.equal(body.selectedResponse, chosen, what);
          if (itemResponses) {
            const items = body.errorData as Msg[];
            assert.equal(items[0].selectedResponse, pressSecret ? itemResponses[0] : chosen, what);
          }
        };
      } else {
        const actions = [
          { id: 1, description: 'Retry', isRecovery: true, isDefault: true },
          {
            id: 7,
            description: where === 'action' ? `Retry with ${echoed}` : 'Retry with a key',
            isRecovery: true,
            isDefault: false,
            inputs: [
              {
                id: 1,
                description: 'Key',
                type: 'text' as const,
                defaultValue: where === 'input' ? echoed : 'plain-9',
                required: true,
              },
            ],
          },
          { id: 3, description: 'Skip this step', isRecovery: true, isDefault: false },
        ];
        error = sim.injectInstrumentError({ title: `E${i}`, actions, defaultActionId: 1 }) as unknown as Msg;
        const action = pressSecret ? actions[1] : actions[2];
        label = action.description.replace(secret, '***');
        legacy = {
          action: String(action.id),
          ...(action.id === 7 ? { 'input.7.1': actions[1].inputs?.[0].defaultValue ?? '' } : {}),
        };
        // the field left as the page filled it in: empty when the suggestion is not shown
        expected = (body) => {
          assert.equal(body.selectedActionId, action.id, what);
          if (action.id === 7) assert.deepEqual(body.inputs, [{ id: 1, value: actions[1].inputs?.[0].defaultValue }], what);
        };
      }

      const out = nextMessage(helper.getNode('out'));
      const key = String(source === 'A' ? error.id : error.uuid);
      helper.getNode('page').receive({ payload: source === 'A' ? { id: key } : { uuid: key }, source, event: 'raised' });
      const link = String((await out).answerUrl);
      const page = await fetchText(link);
      assert.equal(page.status, 200, what);
      assert.ok(!page.text.includes(secret), `${what}: the page's HTML holds the secret:\n${page.text}`);
      const form = formOf(page.text);
      const button = form.buttons.find((b) => buttonText(b.label) === label);
      assert.ok(button, `${what}: no button labelled ${label}: ${form.buttons.map((b) => b.label).join(' | ')}`);
      assert.match(button.value, /^#\d+$/, `${what}: the button posts its position`);
      // the fields as the page filled them in
      const filled: Record<string, string> = {};
      for (const m of page.text.matchAll(/<input type="(?:number|text)"[^>]*?(?:value="([^"]*)")? id="[^"]*" name="([^"]+)"/g))
        filled[m[2]] = m[1] ?? '';

      const sentBefore = source === 'A' ? puts().length : submissions().length;
      const audit = nextMessage(helper.getNode('audit'));
      const body: Record<string, string> =
        post === 'before'
          ? { t: form.t, form: form.form, ...legacy }
          : {
              t: form.t,
              form: form.form,
              o: post === 'forged' ? `${form.o.slice(1)}x` : form.o,
              ...filled,
              ...extra,
              [button.name]: button.value,
            };
      const reply = await fetchText(link.split('?')[0], { form: body });
      const sent = source === 'A' ? puts().slice(sentBefore) : submissions().slice(sentBefore);
      const said = inspect(await audit, { depth: 10 });
      assert.ok(!said.includes(secret), `${what}: the audit msg holds the secret: ${said}`);
      assert.ok(!reply.text.includes(secret), `${what}: the outcome page holds the secret`);
      if (post === 'forged') {
        assert.equal(sent.length, 0, `${what}: sent with a state that does not hold`);
        assert.match(reply.text, /open the link again/, what);
        if (source === 'A') sim.resolvePendingError(key);
        else sim.resolveInstrumentError(key);
        continue;
      }
      assert.equal(reply.status, 200, `${what}: ${reply.text.slice(0, 600)}`);
      assert.equal(sent.length, 1, what);
      expected(sent[0]);
    }
  });
});
