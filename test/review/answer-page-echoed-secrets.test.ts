/**
 * README "Security": one redaction step guards every text that leaves a node, "the answer page" named among them,
 * "also when an instrument echoes them". The page showed the instrument's error as the instrument wrote it: an error
 * whose title, message or action text echoes the lh-server password, a bearer token or a `token: …` line (a proxy's
 * header dump, a login error quoting the request) went out in the page's HTML to whoever held the link, and the
 * page's audit msg (its second output) carried the error record and a refusal's reason as the instrument wrote
 * them. Real Node-RED, the simulator's errors, the page fetched over HTTP.
 */
import assert from 'node:assert/strict';
import { inspect } from 'util';

import { answerOnPage, fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { helper, nextMessage, USER } from '../support/runtime';

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJl';
const SECRETS = [USER.password, JWT, 'TOKQ-PAGE-17', 'APIK-PAGE-93'];

describe('review: the answer page shows no secret an instrument error echoes', function () {
  this.timeout(20000);
  const { sim, pageWithOutputs } = usePageSuite();

  async function load(withB: boolean): Promise<void> {
    const server = bServerFlow(sim, withB ? {} : { withB: false });
    await loadWithPage([...server.nodes, ...pageWithOutputs()], {
      ...server.credentials,
      page: { secret: 'test-secret-not-shown' },
    });
  }

  async function linkFor(record: unknown, source: 'A' | 'B'): Promise<string> {
    const out = nextMessage(helper.getNode('out'));
    // the error's id only (the page reads the error from the instrument itself): the msg holds no secret of its own
    const { id, uuid } = record as { id?: string; uuid?: string };
    helper.getNode('page').receive({ payload: source === 'A' ? { id } : { uuid }, source, event: 'raised' });
    return String((await out).answerUrl);
  }

  function assertClean(text: string, where: string): void {
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `${where} shows ${secret}:\n${text}`);
  }

  it('an A error: the question page and the answer page keep the words, not the secrets', async function () {
    await load(false);
    const error = sim.injectPendingError({
      title: `Login refused for admin with password ${USER.password}`,
      message: `upstream said:\nAuthorization: Bearer ${JWT}\ntoken: TOKQ-PAGE-17\nretry?api_key=APIK-PAGE-93`,
      responses: ['Retry', 'Abort'],
    });
    const link = await linkFor(error, 'A');
    const page = await fetchText(link);
    assert.equal(page.status, 200);
    assert.match(page.text, /Login refused for admin with password \*\*\*/);
    assert.match(page.text, /Authorization: Bearer \*\*\*/);
    assertClean(page.text, 'the question page');
    const audit = nextMessage(helper.getNode('audit'));
    const answered = await answerOnPage(link, 'Retry');
    assert.equal(answered.status, 200, answered.text);
    assert.match(answered.text, /Answered with <b>Retry<\/b>/);
    assertClean(answered.text, 'the outcome page');
    // the page's audit msg carries the error as answered: its words kept, its secrets not
    const said = inspect(await audit, { depth: 10 });
    assert.match(said, /Login refused for admin with password \*\*\*/);
    assertClean(said, 'the audit msg');
  });

  it('a B error: the action texts are redacted, the action still answers', async function () {
    await load(true);
    sim.state.handlers.add('nodered1');
    const error = sim.injectInstrumentError({
      title: `Session ${JWT} expired`,
      message: 'proxy: X-Api-Key: APIK-PAGE-93',
      actions: [
        { id: 1, description: 'Retry with token: TOKQ-PAGE-17', isRecovery: true, isDefault: true },
        { id: 4, description: 'Abort the run', isRecovery: false, isDefault: false },
      ],
      defaultActionId: 1,
    });
    const link = await linkFor(error, 'B');
    const page = await fetchText(link);
    assert.equal(page.status, 200);
    assertClean(page.text, 'the question page');
    assert.match(page.text, /Retry with token: \*\*\*/);
    const answered = await answerOnPage(link, '1');
    assert.equal(answered.status, 200, answered.text);
    assertClean(answered.text, 'the outcome page');
    assert.equal(sim.requests.filter((r) => r.api === 'B' && r.path.endsWith('/recovery')).length, 1);
  });
});
