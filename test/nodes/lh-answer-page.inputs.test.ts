import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, nextMessage } from '../support/runtime';
import { answersSent, recoverySubmissions } from '../support/sim-requests';
import { buttonText, fetchText, formOf, loadWithPage, PageServer, startPageServer } from './lh-answer-page.support';
import { bServerFlow, statusWhere } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

/** The simulator's action 2, the one with an input (the second button: its fields are `input.#1.<id>`). */
const AT_HEIGHT = 'Retry with a new aspiration height';

/**
 * Submits the page's form as a browser does: the hidden fields, the fields' values (as filled in or changed), the
 * button labelled `button` (its value is its position, `#<n>`; fields are named `input.#<n>.<input id>`).
 */
async function submitPage(
  link: string,
  button: string,
  fields: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const page = await fetchText(link);
  const form = formOf(page.text);
  const b = form.buttons.find((x) => buttonText(x.label) === button);
  if (!b) throw new Error(`no button ${button}: ${page.text.slice(0, 300)}`);
  const filled: Record<string, string> = {};
  for (const m of page.text.matchAll(/<input type="(?:number|text)"[^>]*?(?:value="([^"]*)")? id="[^"]*" name="([^"]+)"/g))
    filled[m[2]] = m[1] ?? '';
  return fetchText(link.split('?')[0], {
    form: { t: form.t, form: form.form, o: form.o, ...filled, ...fields, [b.name]: b.value },
  });
}

describe('lh-answer-page: answers that carry what they need', function () {
  this.timeout(20000);
  const sim = useInstrument({
    afterEach: () => {
      restartMemory();
    },
  });
  let web: PageServer;
  before(async function () {
    web = await startPageServer();
  });
  after(async function () {
    await web.close();
  });

  const submissions = (): Msg[] => recoverySubmissions(sim).map((r) => r.body as Msg);
  const puts = (): Msg[] => answersSent<Msg>(sim);

  async function load(withPolicy = false, withB = true): Promise<void> {
    const server = withB ? bServerFlow(sim) : bServerFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        {
          id: 'page',
          type: 'lh-answer-page',
          server: 'server',
          publicUrl: web.url,
          publicUrlType: 'str',
          path: '/lh-answer',
          wires: [['out'], ['audit']],
        },
        { id: 'out', type: 'helper' },
        { id: 'audit', type: 'helper' },
        ...(withPolicy
          ? [
              {
                id: 'policy',
                type: 'lh-error-policy',
                version: 2,
                server: 'server',
                rules: [],
                wires: [['notify'], ['auto'], ['escalate']],
              },
              { id: 'notify', type: 'helper' },
              { id: 'auto', type: 'helper' },
              { id: 'escalate', type: 'helper' },
            ]
          : []),
      ],
      { ...server.credentials, page: { secret: 'inputs-test-secret' } },
    );
    sim.state.handlers.add('nodered1');
  }

  async function linkFor(record: Msg, source: 'A' | 'B'): Promise<string> {
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: record, source, event: 'raised' });
    return String((await out).answerUrl);
  }

  it("shows a field per input of an action, with its type, range and the instrument's default", async function () {
    await load();
    const link = await linkFor(sim.injectInstrumentError() as unknown as Msg, 'B');
    const page = await fetchText(link);
    assert.match(
      page.text,
      /<label for="input-1-1">Aspiration height above bottom \(mm\) \(number from 0\.5 to 10 mm, required\)<\/label>\n<input type="number" min="0\.5" max="10" step="any" value="2" id="input-1-1" name="input\.#1\.1">\n<button type="submit" name="action" value="#1">/,
    );
    assert.match(
      page.text,
      /name="action" value="#0" formnovalidate class="default">Retry \(default\)/,
      'an action without inputs needs no field',
    );
  });

  it('sends the value given in the field; a value out of range is explained and nothing is sent', async function () {
    await load();
    const error = sim.injectInstrumentError() as unknown as Msg;
    const link = await linkFor(error, 'B');
    const bad = await submitPage(link, AT_HEIGHT, { 'input.#1.1': '42' });
    assert.equal(bad.status, 502);
    assert.match(
      bad.text,
      /Nothing was sent: inputs\.1 \(Aspiration height above bottom \(mm\), a number from 0\.5 to 10 mm\) must be a number from 0\.5 to 10 mm/,
    );
    const empty = await submitPage(link, AT_HEIGHT, { 'input.#1.1': '' });
    assert.match(empty.text, /Nothing was sent: inputs\.1 .* is required by action 2/);
    assert.equal(submissions().length, 0);

    const audit = nextMessage(helper.getNode('audit'));
    const ok = await submitPage(link, AT_HEIGHT, { 'input.#1.1': '3.25' });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(submissions()[0].inputs, [{ id: 1, value: '3.25' }]);
    assert.deepEqual(sim.state.instrumentErrors[0].selectedInputs, [{ id: 1, value: '3.25' }]);
    assert.deepEqual(((await audit).payload as Msg).inputs, { 1: '3.25' });
  });

  it('answers an A error per item where the items offer their own responses, and explains a response an item does not offer', async function () {
    await load(false, false);
    const error = sim.injectPendingError({
      title: 'Tip pick-up failed',
      responses: ['Retry', 'Abort'],
      errorData: [
        { id: 'ch1', description: 'Channel 1', responses: ['Skip', 'Abort'] },
        { id: 'ch2', description: 'Channel 2' },
      ],
    }) as unknown as Msg;
    const link = await linkFor(error, 'A');
    const page = await fetchText(link);
    assert.match(
      page.text,
      /<label for="item-0">Item ch1 \(Channel 1\): offers Skip, Abort<\/label>\n<select id="item-0" name="item\.#0"><option value="">as the answer below<\/option><option value="#0">Skip<\/option><option value="#1">Abort<\/option><\/select>/,
    );
    assert.doesNotMatch(page.text, /item-1|ch2/, 'an item offering what the error offers takes the main answer');

    const refused = await submitPage(link, 'Retry');
    assert.match(
      refused.text,
      /Nothing was sent: Item ch1 \(Channel 1\) does not offer &#34;Retry&#34;; it offers Skip, Abort\. Choose an answer for it and send again\./,
    );
    assert.equal(puts().length, 0);

    const ok = await submitPage(link, 'Retry', { 'item.#0': '#0' });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(puts()[0].errorData, [
      { id: 'ch1', selectedResponse: 'Skip' },
      { id: 'ch2', selectedResponse: 'Retry' },
    ]);
  });

  it('"the same for similar errors until this run ends": the policy answers the next similar error alike, until the run ends', async function () {
    await load(true);
    const policy = helper.getNode('policy') as unknown as { receive(m: Msg): void };
    policy.receive({
      topic: 'state',
      state: 'Running',
      payload: { protocolRunState: 'Running', protocolId: 5, startTime: '2026-11-24T10:00:00.000Z' },
    });
    const first = sim.injectInstrumentError({ title: 'Clot' }) as unknown as Msg;
    const link = await linkFor(first, 'B');
    assert.match((await fetchText(link)).text, /name="scope" value="run"/);
    const shown = statusWhere('policy', (s) => /rule\(s\) until the run ends|runRules/.test(String(s.text)), 5000);
    const ok = await submitPage(link, AT_HEIGHT, { 'input.#1.1': '4', scope: 'run' });
    assert.match(ok.text, /Similar errors get the same answer until this run ends/);
    await shown; // the policy's status shows the run-scoped rule

    const auto = nextMessage(helper.getNode('auto'));
    const second = sim.injectInstrumentError({ title: 'Clot' }) as unknown as Msg;
    policy.receive({ payload: second, source: 'B', event: 'raised' });
    const answered = await auto;
    assert.equal(answered.outcome, 'answered');
    assert.equal(((answered.payload as Msg).runRule as Msg).chosenOn, first.uuid);
    assert.deepEqual(submissions()[1], { ...submissions()[1], selectedActionId: 2, inputs: [{ id: 1, value: '4' }] });

    const other = sim.injectInstrumentError({ title: 'Door open' }) as unknown as Msg;
    const notified = nextMessage(helper.getNode('notify'));
    policy.receive({ payload: other, source: 'B', event: 'raised' });
    assert.equal(((await notified).policy as Msg).mode, 'manual', 'an error that is not similar is not answered');

    policy.receive({ topic: 'finished', payload: {} });
    const third = sim.injectInstrumentError({ title: 'Clot' }) as unknown as Msg;
    const afterRun = nextMessage(helper.getNode('notify'));
    policy.receive({ payload: third, source: 'B', event: 'raised' });
    assert.equal(((await afterRun).policy as Msg).mode, 'manual', 'the run ended: the rule is dropped');
    assert.equal(submissions().length, 2, 'the manual errors were not answered');
  });

  it('offers no run-scoped answer where no error policy applies it', async function () {
    await load(false);
    const link = await linkFor(sim.injectInstrumentError() as unknown as Msg, 'B');
    assert.doesNotMatch((await fetchText(link)).text, /name="scope"/);
  });

  it('lh-submit-recovery: detailedErrorRecoveries with real content reach the instrument; a bad input of a detail is refused before sending', async function () {
    const server = bServerFlow(sim);
    await loadWithPage(
      [
        ...server.nodes,
        { id: 'submit', type: 'lh-submit-recovery', server: 'server', kind: 'recovery', wires: [['done']] },
        { id: 'done', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['submit'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
    sim.state.handlers.add('nodered1');
    const d1 = '11111111-2222-4333-8444-555555555555';
    const d2 = '11111111-2222-4333-8444-666666666666';
    const actions = [
      { id: 1, description: 'Retry', isRecovery: true, isDefault: true },
      {
        id: 2,
        description: 'Retry higher',
        isRecovery: true,
        isDefault: false,
        inputs: [{ id: 1, description: 'Height', type: 'number' as const, min: 1, max: 5 }],
      },
    ];
    const error = sim.injectInstrumentError({
      title: 'Clots on two channels',
      details: [
        { uuid: d1, title: 'Channel 1', message: 'clot', actions },
        { uuid: d2, title: 'Channel 2', message: 'clot', actions },
      ],
    }) as unknown as Msg;
    assert.equal((error.details as unknown[]).length, 2);

    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('submit').receive({
      payload: error,
      selectedActionId: 1,
      detailedErrorRecoveries: [{ uuid: d2, selectedActionId: 2, inputs: [{ id: 1, value: '9' }] }],
    });
    assert.match(
      String(((await caught).error as Msg).message),
      /detailedErrorRecoveries\[0\]\.inputs\.1 \(Height, a number from 1 to 5\) must be a number from 1 to 5/,
    );
    assert.equal(submissions().length, 0);

    const done = nextMessage(helper.getNode('done'));
    helper.getNode('submit').receive({
      payload: error,
      selectedActionId: 1,
      detailedErrorRecoveries: [
        { uuid: d1, selectedActionId: 1 },
        { uuid: d2, selectedActionId: 2, inputs: [{ id: 1, value: '3' }] },
      ],
    });
    await done;
    const handled = sim.state.instrumentErrors.find((e) => e.uuid === error.uuid);
    assert.deepEqual(handled?.detailedRecoveries, [
      { uuid: d1, selectedActionId: 1, inputs: [] },
      { uuid: d2, selectedActionId: 2, inputs: [{ id: 1, value: '3' }] },
    ]);
  });
});
