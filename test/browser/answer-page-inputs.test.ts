// The answer page's input fields in a real Chromium (JavaScript off, as on a locked-down phone): the browser's own
// checks of type and range, the buttons of actions without inputs never held back by them, the value reaching the
// instrument.
import assert from 'node:assert/strict';

import { loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { usePhonePage } from '../support/browser';
import { helper, nextMessage } from '../support/runtime';
import { recoverySubmissions } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('answer page inputs in Chromium', function () {
  this.timeout(30000);
  const { sim, pageNode } = usePageSuite();
  const phone = usePhonePage();
  beforeEach(async function () {
    const server = bServerFlow(sim);
    await loadWithPage(
      [
        ...server.nodes,
        pageNode({ wires: [['linked'], ['audit']] }),
        { id: 'linked', type: 'helper' },
        { id: 'audit', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'browser-inputs-secret' } },
    );
    sim.state.handlers.add('nodered1');
  });

  const submissions = (): Msg[] => recoverySubmissions(sim).map((r) => r.body as Msg);

  async function linkFor(record: unknown): Promise<string> {
    const out = nextMessage(helper.getNode('linked'));
    helper.getNode('page').receive({ payload: record, source: 'B', event: 'raised' });
    return String((await out).answerUrl);
  }

  it('a value out of range is held back by the browser; the value typed goes out with the action', async function () {
    await phone.page.goto(await linkFor(sim.injectInstrumentError()));
    const height = phone.page.locator('input[name="input.#1.1"]');
    assert.equal(await height.inputValue(), '2', "the instrument's default is filled in");
    assert.match(await phone.page.locator('label[for="input-1-1"]').innerText(), /number from 0\.5 to 10 mm, required/);

    await height.fill('42');
    await phone.page.click('button:has-text("Retry with a new aspiration height")');
    assert.equal(await phone.page.locator('.outcome').count(), 0, 'the browser did not submit an out-of-range value');
    assert.equal(submissions().length, 0);

    await height.fill('3.5');
    await phone.page.click('button:has-text("Retry with a new aspiration height")');
    await phone.page.waitForSelector('.outcome');
    assert.match(
      await phone.page.locator('.outcome').innerText(),
      /^Answered with Retry with a new aspiration height \(action 2\)/,
    );
    assert.deepEqual(submissions()[0].inputs, [{ id: 1, value: '3.5' }]);
  });

  it("an action without inputs is never held back by another action's field", async function () {
    await phone.page.goto(await linkFor(sim.injectInstrumentError()));
    await phone.page.locator('input[name="input.#1.1"]').fill('42');
    await phone.page.click('button:has-text("Skip this step")');
    await phone.page.waitForSelector('.outcome');
    await until(() => submissions().length === 1, 'the submission');
    assert.equal(submissions()[0].selectedActionId, 3);
    assert.equal(submissions()[0].inputs, null, 'no input goes with an action that has none');
  });
});
