/**
 * Issue 17, point 2 (last item): a firmware error (on `instincterrors` only, never in the error list) is answerable
 * wherever the README says, also on the answer page: the link lh-answer-page made for it shows the error and its
 * buttons while the instrument waits (it showed "no longer pending"), the answer reaches the instrument once, and the
 * error is then reported resolved. Real Node-RED runtime, simulator, the page over loopback HTTP.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper } from '../support/runtime';
import { until } from '../support/until';
import { answerOnPage, fetchText, formOf, loadWithPage, PageServer, startPageServer } from './lh-answer-page.support';
import { bServerFlow, socketOpen } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

describe('firmware errors on the answer page', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let web: PageServer;
  before(async function () {
    web = await startPageServer();
  });
  after(async function () {
    await web.close();
  });

  async function load(): Promise<{ linked: Msg[]; resolved: Msg[] }> {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['page'], ['resolved'], []] },
        {
          id: 'page',
          type: 'lh-answer-page',
          server: 'server',
          publicUrl: web.url,
          publicUrlType: 'str',
          path: '/lh-answer',
          wires: [['linked'], []],
        },
        { id: 'linked', type: 'helper' },
        { id: 'resolved', type: 'helper' },
      ],
      { ...server.credentials, page: { secret: 'firmware-page-secret' } },
    );
    return { linked: collect(helper.getNode('linked')), resolved: collect(helper.getNode('resolved')) };
  }

  it('shows the firmware error with its buttons, answers it once, and it is reported resolved', async function () {
    sim.firmwareAnswerPushesResolution = false;
    const { linked, resolved } = await load();
    await until(() => socketOpen(sim), 'the errors socket open on both ends', 10000);
    const fw = sim.raiseFirmwareError({ title: 'Tip pickup failed', responses: ['Retry', 'Abort'] });
    await until(() => linked.length === 1, 'the raised msg with its link', 10000);
    const link = String(linked[0].answerUrl);

    const page = await fetchText(link);
    assert.equal(page.status, 200);
    assert.match(page.text, /Tip pickup failed/);
    assert.deepEqual(
      formOf(page.text).buttons.map((b) => b.label),
      ['Retry', 'Abort'],
      `the instrument waits for an answer: the page offers it (${page.text.slice(0, 300)})`,
    );

    const answered = await answerOnPage(link, 'Retry', 'Ana');
    assert.match(answered.text, /Answered|answered/, answered.text.slice(0, 400));
    const puts = sim.requests.filter((r) => r.method === 'PUT' && r.path.startsWith('/api/v1/errors/runtime'));
    assert.equal(puts.length, 1, 'one answer reached the instrument');
    await until(() => resolved.length === 1, 'the resolution (this Node-RED answered it)');
    assert.equal(resolved[0].errorId, fw.id);

    const again = await fetchText(link);
    assert.equal(formOf(again.text).buttons.length, 0, 'no second form once answered');
    assert.equal(sim.requests.filter((r) => r.method === 'PUT' && r.path.startsWith('/api/v1/errors/runtime')).length, 1);
  });
});
