/**
 * README "Security": a password or token never reaches msg, status or logs, "also when an instrument echoes them".
 * The redaction step looked for a configured secret as written, JSON-escaped the way JSON.stringify escapes, and
 * percent-encoded the way encodeURIComponent does: the instrument's own stack escapes otherwise. .NET's
 * System.Text.Json (the instrument's service) writes `+ < > & ' "` and every non-ASCII letter as `\u002B`…, Python's
 * json and Java's Jackson write `\u00e4` in lower case, PHP writes `\/`, a form echo writes a space as `+`, percent
 * hex comes in lower case, and an HTML error page writes `&amp;`, `&#39;`, `&#xE4;`. An error body in text or HTML
 * (kept as text: it is not JSON) that quoted the login with a password holding such a character (generated passwords
 * do) put the password into msg.error, the Error Catch nodes get, the status, the log and the Test connection report.
 *
 * Seeded property over drawn secrets and echo spellings (LH_SEED replays, LH_CASES extends), then the same echoes
 * from an instrument in a real Node-RED, to every place a failure is told.
 */
import assert from 'node:assert/strict';
import http from 'http';
import { inspect } from 'util';

import { redactText, redactValue } from '../../src/contract/redaction';
import { closeLocal, listenLocal } from '../support/local-server';
import { builtNode } from '../support/node-suite';
import { parseSeed, Rng } from '../support/prng';
import { helper, nextMessage, startServer, stopServer, tlsConfigNode, USER } from '../support/runtime';

const SEED = process.env.LH_SEED ? parseSeed(process.env.LH_SEED) : Date.now() % 2 ** 32;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 400;

const u4 = (code: number, upper: boolean): string => {
  const hex = code.toString(16).padStart(4, '0');
  return `\\u${upper ? hex.toUpperCase() : hex}`;
};
/** Every UTF-16 unit of `ch` as \uXXXX. */
const jsonUnits = (ch: string, upper: boolean): string =>
  [...Array(ch.length).keys()].map((i) => u4(ch.charCodeAt(i), upper)).join('');
const jsonShort = (s: string): string => JSON.stringify(s).slice(1, -1);

/** How the stacks in front of an instrument spell a text they echo. */
const ECHOES: Record<string, (s: string) => string> = {
  'as is': (s) => s,
  'JSON.stringify': jsonShort,
  // System.Text.Json's default encoder: + < > & ' " ` and every non-ASCII character as \uXXXX (upper-case hex)
  'System.Text.Json': (s) =>
    [...s].map((c) => (/[+<>&'"`]/.test(c) || c.charCodeAt(0) > 0x7e ? jsonUnits(c, true) : jsonShort(c))).join(''),
  // Python's json.dumps, Jackson with ESCAPE_NON_ASCII: non-ASCII as \uxxxx (lower-case hex)
  'json ensure_ascii': (s) => [...s].map((c) => (c.charCodeAt(0) > 0x7e ? jsonUnits(c, false) : jsonShort(c))).join(''),
  // PHP's json_encode: `/` as `\/`
  'php json_encode': (s) => jsonShort(s).replace(/\//g, '\\/'),
  encodeURIComponent: (s) => encodeURIComponent(s),
  'percent, lower-case hex': (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  'form (space as +)': (s) => new URLSearchParams({ x: s }).toString().slice(2),
  'HTML (named, &#39;)': (s) =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'),
  'HTML (every sign a hex reference)': (s) =>
    [...s].map((c) => (/[A-Za-z0-9]/.test(c) ? c : `&#x${c.codePointAt(0)!.toString(16).toUpperCase()};`)).join(''),
  'HTML (decimal references)': (s) => [...s].map((c) => (/[A-Za-z0-9 ]/.test(c) ? c : `&#${c.codePointAt(0)};`)).join(''),
};

/** Secret characters: letters and digits, and the signs and letters generated passwords hold. */
const SIGNS = [...`+<>&'"\`/\\ %#?=:;,.!*()[]{}$@~^|-_`, 'ä', 'Ö', 'ß', 'é', 'Ж', '中', '😀', '\t'];
const ALNUM = [...'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'];

function drawSecret(rng: Rng): string {
  const n = rng.int(4, 16);
  let s = '';
  for (let i = 0; i < n; i++) s += rng.chance(0.35) ? rng.pick(SIGNS) : rng.pick(ALNUM);
  return s;
}

/** Texts an instrument answers with, holding the echo where no field name says it is a secret. */
const FRAMES = [
  (e: string): string => `login refused for user admin with ${e} (rule 4)`,
  (e: string): string => `{"title":"Bad Request","detail":"could not log in admin/${e}"}`,
  (e: string): string => `<html><body><h1>401</h1><table><tr><td>Form</td><td>${e}</td></tr></table></body></html>`,
  (e: string): string => `user=admin&given=${e}&remember=1`,
];

describe('review: a configured secret echoed in the escapes of other stacks is redacted (seeded)', function () {
  it(`no drawn secret survives in any drawn spelling, and other texts stay as they are (seed ${SEED})`, function () {
    console.log(`      redaction spelling seed: ${SEED} (LH_SEED=${SEED} replays it, LH_CASES=${CASES})`);
    const rng = new Rng(SEED);
    const names = Object.keys(ECHOES);
    for (let i = 0; i < CASES; i++) {
      const secret = drawSecret(rng);
      const name = rng.pick(names);
      const echoed = ECHOES[name](secret);
      const frame = rng.pick(FRAMES);
      const text = frame(echoed);
      const out = redactText(text, [secret]);
      const replay = `secret ${JSON.stringify(secret)} echoed by ${name} as ${JSON.stringify(echoed)} (seed ${SEED}, case ${i})`;
      assert.ok(!out.includes(echoed), `${replay}: still in ${JSON.stringify(out)}`);
      assert.ok(out.includes('***'), `${replay}: nothing redacted in ${JSON.stringify(out)}`);
      // the same frame around another text: nothing of it is taken for the secret
      const other = frame('Plain words 42');
      assert.equal(redactText(other, [secret]), redactText(other), `${replay}: over-redacted ${JSON.stringify(other)}`);
      // and deep in an error body as the transport keeps one
      const body = redactValue({ detail: text, nested: [text] }, [secret]);
      assert.ok(!JSON.stringify(body).includes(JSON.stringify(echoed).slice(1, -1)), `${replay}: left in a body`);
    }
  });

  it('a short or ordinary secret still does not blank out ordinary text', function () {
    assert.equal(redactText('a+b & c', ['+b']), 'a+b & c');
    assert.equal(redactText('the lab is ready', ['lab']), 'the *** is ready');
    assert.equal(redactText('%2B and \\u002B and &#43;', ['+ab']), '%2B and \\u002B and &#43;');
  });
});

const PASSWORD = "Lw+9Ä&Q<x'7!";

/** An instrument whose login is refused with a text or HTML page quoting what it was sent, spelled its own way. */
async function startInstrument(kind: 'dotnet-text' | 'html'): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      let sent: Record<string, unknown> = {};
      try {
        sent = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // not JSON: nothing to quote
      }
      const given = Object.values(sent).map(String).join(' / ');
      if (kind === 'dotnet-text') {
        res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`Login refused for the credentials ${ECHOES['System.Text.Json'](given)}`);
      } else {
        res.writeHead(401, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end(`<p>Login refused for <b>${ECHOES['HTML (named, &#39;)'](given)}</b></p>`);
      }
    });
  });
  return { url: await listenLocal(server), close: () => closeLocal(server) };
}

describe('review: a password echoed in another stack’s escapes reaches no msg, status, log or report', function () {
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

  /** Every spelling of the password an echo here may use. */
  const leaks = (text: string): string[] =>
    Object.entries(ECHOES)
      .filter(([, spell]) => text.includes(spell(PASSWORD)))
      .map(([name]) => name);

  for (const kind of ['dotnet-text', 'html'] as const) {
    it(`login refused with a ${kind} page quoting the password: msg.error, Error, status, log clean`, async function () {
      instrument = await startInstrument(kind);
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
      const whole = inspect(msg, { depth: 12 });
      // the echo did reach the node (redacted): the instrument's words are there
      assert.match(whole, /Login refused/);
      assert.deepEqual(leaks(whole), [], `the msg holds the password:\n${whole}`);
      for (const t of texts) assert.deepEqual(leaks(t), [], `a status or log line holds the password:\n${t}`);

      const res = await helper
        .request()
        .post('/lh-server/test-connection')
        .send({ id: 'server', baseUrl: instrument.url, instrumentUrl: '', username: USER.username, password: '__PWRD__' });
      assert.equal(res.status, 200, res.text);
      // a text answer is quoted in the report (an HTML page is not: its status text is)
      if (kind === 'dotnet-text') assert.match(res.text, /Login refused/);
      assert.deepEqual(leaks(res.text), [], `the Test connection report holds the password:\n${res.text}`);
    });
  }
});
