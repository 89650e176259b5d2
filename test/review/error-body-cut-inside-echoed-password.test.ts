/**
 * README "Security": no password in msg, status or logs, also when an instrument echoes it. The client keeps at most
 * 2000 characters of an error's text body (500 of a 2xx answer that is not JSON) in `msg.error.body`, cut before the
 * redaction step at the node's edge sees it: a password the instrument quoted across the cut lost its end, and what
 * was left (most of the password) matched no secret and went out as it was, in msg.error (cause.body, _error.body),
 * the Error given to Catch nodes and the Test connection report. Now the cut never falls inside a secret the request
 * carried (a login's password, a new password, its token): it is made before the secret.
 *
 * Seeded (LH_SEED replays, LH_CASES extends): where the quoted password starts around the cut, in text or HTML.
 */
import assert from 'node:assert/strict';
import http from 'http';
import { inspect } from 'util';

import { clipOutside, redactText } from '../../src/contract/redaction';
import { closeLocal, listenLocal } from '../support/local-server';
import { builtNode } from '../support/node-suite';
import { parseSeed, Rng } from '../support/prng';
import { helper, nextMessage, startServer, stopServer, tlsConfigNode, USER } from '../support/runtime';

const SEED = process.env.LH_SEED ? parseSeed(process.env.LH_SEED) : Date.now() % 2 ** 32;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;
/** What the client keeps of an error's text body. */
const CUT = 2000;
const PASSWORD = 'Q7mZk2Lp9WxRv4Nd';

/** Every piece of the password of 5 characters or more found in `text`. */
function piecesIn(text: string, secret = PASSWORD): string[] {
  const found: string[] = [];
  for (let i = 0; i + 5 <= secret.length; i++) if (text.includes(secret.slice(i, i + 5))) found.push(secret.slice(i, i + 5));
  return found;
}

/** An instrument refusing every login with a long page that quotes the password sent, starting at `at`. */
async function startInstrument(at: number, html: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      let sent = '';
      try {
        sent = String((JSON.parse(body) as { password?: unknown }).password ?? '');
      } catch {
        // not a login
      }
      const page = `${'.'.repeat(at)}${sent} was refused for this user${'.'.repeat(300)}`;
      res.writeHead(401, { 'Content-Type': html ? 'text/html' : 'text/plain' });
      res.end(html ? `<html><body><pre>${page}</pre></body></html>` : page);
    });
  });
  return { url: await listenLocal(server), close: () => closeLocal(server) };
}

describe('review: an error body cut inside a password it quotes (seeded)', function () {
  it(`the cut never leaves a piece of a secret, wherever it falls (seed ${SEED})`, function () {
    const rng = new Rng(SEED);
    for (let i = 0; i < 200; i++) {
      const secret = `${PASSWORD.slice(0, rng.int(6, PASSWORD.length))}${rng.pick(['', '+&', '"<'])}`;
      const spelled = rng.pick([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
      const at = rng.int(CUT - spelled.length - 2, CUT + 2);
      const text = `${'.'.repeat(at)}${spelled}${'.'.repeat(rng.int(0, 50))}`;
      const kept = clipOutside(text, CUT, [secret]);
      assert.ok(kept.length <= CUT, `kept ${kept.length} characters`);
      assert.ok(text.startsWith(kept), 'what is kept is the start of the text');
      // what the redaction step at the node's edge then lets out
      const shown = redactText(kept, [secret]);
      assert.deepEqual(piecesIn(shown), [], `seed ${SEED} case ${i}: ${JSON.stringify(shown.slice(-40))}`);
      // a cut that splits no secret is where it always was
      if (at >= CUT || at + spelled.length <= CUT) assert.equal(kept, text.slice(0, CUT), `case ${i} cut elsewhere`);
    }
  });
});

describe('review: a login refused with a long page quoting the password, cut across it', function () {
  let instrument: Awaited<ReturnType<typeof startInstrument>> | undefined;
  const texts: string[] = [];

  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
    await instrument?.close();
    instrument = undefined;
    texts.length = 0;
  });

  const rng = new Rng(SEED);
  const cases = Array.from({ length: CASES }, (_, i) => ({
    html: i % 2 === 1,
    // the password starts from 12 before the cut to 3 before it: the cut falls inside it
    at: CUT - rng.int(3, PASSWORD.length - 4) - (i % 2 === 1 ? '<html><body><pre>'.length : 0),
  }));
  for (const { html, at } of cases) {
    it(`${html ? 'HTML' : 'text'}, the password at ${at} (seed ${SEED}): no piece of it in msg, status, log or report`, async function () {
      instrument = await startInstrument(at, html);
      await helper.load(
        [tlsConfigNode, builtNode('lh-server'), builtNode('lh-settings')],
        [
          { id: 'server', type: 'lh-server', baseUrl: instrument.url, instrumentUrl: '', clientKey: 'k1', timeout: 3000 },
          { id: 'settings', type: 'lh-settings', server: 'server', operation: 'get-software-settings', wires: [['out']] },
          { id: 'out', type: 'helper' },
          { id: 'catcher', type: 'catch', scope: ['settings'], wires: [['caught']] },
          { id: 'caught', type: 'helper' },
        ],
        { server: { username: USER.username, password: PASSWORD } },
      );
      for (const id of ['server', 'settings']) {
        const node = helper.getNode(id);
        for (const method of ['status', 'log', 'warn', 'error'])
          node.on(`call:${method}`, (call: { args: unknown[] }) =>
            texts.push(`${id} ${method}: ${inspect(call.args, { depth: 8 })}`),
          );
      }
      const caught = nextMessage(helper.getNode('caught'));
      helper.getNode('settings').receive({ payload: null });
      const msg = await caught;
      const whole = inspect(msg, { depth: 12, maxStringLength: Infinity });
      // the page reached the msg (its dots), cut
      assert.match(whole, /\.{100}/);
      assert.deepEqual(piecesIn(whole), [], `the msg holds a piece of the password:\n${whole.slice(-1500)}`);
      for (const t of texts) assert.deepEqual(piecesIn(t), [], `a status or log line holds a piece of the password:\n${t}`);

      const res = await helper
        .request()
        .post('/lh-server/test-connection')
        .send({ id: 'server', baseUrl: instrument.url, instrumentUrl: '', username: USER.username, password: '__PWRD__' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(piecesIn(res.text), [], `the Test connection report holds a piece of the password:\n${res.text}`);
    });
  }
});
