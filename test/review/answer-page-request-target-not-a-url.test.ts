/**
 * The answer page read its query with `new URL(req.url, base)`, which throws for a request target Node's HTTP parser
 * and Express accept: an absolute-form target with a port out of range (`POST http://:99999/lh-answer HTTP/1.1`)
 * has the path `/lh-answer` for Express's router, so the page's route takes it, and the URL parser refuses it. On a
 * POST without `t` in the form the throw happened inside a promise callback nobody handled: an unhandled rejection,
 * and red.js exits on it (one request from anyone on the network stopped Node-RED and the instrument's flows). On a
 * GET, Express's default error page answered with the stack trace (the install's paths), without the page's headers.
 * A real Node-RED (red.js in a child process): such requests get the page's plain 403, and Node-RED stays up.
 */
import assert from 'node:assert/strict';
import net from 'net';

import { queryParam } from '../../src/nodes/lh-answer-page/http-routes';
import { Simulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { requestText } from '../support/http-text';
import { Rng } from '../support/prng';
import { type RedProcess, startRedProcess } from '../support/red-process';
import { startSimulator } from '../support/runtime';

/** One raw HTTP/1.1 request (the target as written), the whole reply as text ('' when the socket closes unanswered). */
function raw(port: number, requestLine: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(
        `${requestLine}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (reply += chunk));
    socket.on('close', () => resolve(reply));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(reply) : reject(err)));
  });
}

describe('answer page: a request target that is no URL (real Node-RED, red.js)', function () {
  this.timeout(60000);
  let sim: Simulator;
  let red: RedProcess | undefined;
  let port: number;

  before(async function () {
    sim = await startSimulator();
    port = await freePort();
    const flows = [
      { id: 'tab', type: 'tab', label: 'page' },
      { id: 'server', type: 'lh-server', name: 'sim', baseUrl: sim.baseUrl, instrumentUrl: '', clientKey: 'nodered1' },
      {
        id: 'page',
        type: 'lh-answer-page',
        z: 'tab',
        server: 'server',
        path: '/lh-answer',
        publicUrl: `http://127.0.0.1:${port}`,
        publicUrlType: 'str',
        wires: [[], []],
      },
    ];
    red = await startRedProcess({
      port,
      flows,
      credentials: { server: { username: 'admin', password: 'labwire' } },
      prefix: 'lh-target-',
    });
  });

  after(async function () {
    await red?.stop();
    await sim?.stop();
  });

  async function stillUp(): Promise<void> {
    assert.equal(red?.child.exitCode, null, `Node-RED exited:\n${red?.output().slice(-2000)}`);
    const page = await requestText(`http://127.0.0.1:${port}/lh-answer?t=nothing`, { method: 'GET' });
    assert.equal(page.status, 403, `Node-RED no longer answers:\n${red?.output().slice(-2000)}`);
  }

  for (const target of ['http://:99999/lh-answer', 'http://:99999/lh-answer?t=x', 'http://nodered.lab:65536/lh-answer']) {
    it(`POST ${target} (a form without t): the plain 403 page, Node-RED stays up`, async function () {
      const reply = await raw(port, `POST ${target} HTTP/1.1`, 'response=%230');
      assert.match(reply, /^HTTP\/1\.1 403 /, reply || `(no reply: the socket closed)\n${red?.output().slice(-1500)}`);
      assert.match(reply, /content-security-policy: default-src 'none'/i);
      assert.match(reply, /This link is not valid/);
      await stillUp();
    });

    it(`GET ${target}: the plain 403 page, no stack trace`, async function () {
      const reply = await raw(port, `GET ${target} HTTP/1.1`);
      assert.match(reply, /^HTTP\/1\.1 403 /, reply || `(no reply: the socket closed)\n${red?.output().slice(-1500)}`);
      assert.match(reply, /content-security-policy: default-src 'none'/i);
      assert.doesNotMatch(reply, /TypeError|Invalid URL|node_modules|\.js:\d+/);
      await stillUp();
    });
  }
});

describe('answer page: the query of any request target (seeded)', function () {
  const seed = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
  const cases = process.env.LH_CASES ? Number(process.env.LH_CASES) : 300;
  const PIECES = ['t', 'photo', 'view', '=', '&', '?', '#', '%', '%zz', '%41', '+', 'x', '/', ':', '@', '[', 'ü', '99999'];
  const PREFIXES = ['/lh-answer', 'http://:99999/lh-answer', 'http://h:1880/lh-answer', '//x/lh-answer', '', 'http://[/a'];

  // sweep98, seed 932260261 (LH_CASES=1500): Node's (20, 22) `new URLSearchParams(text)` read a non-ASCII letter
  // after a `%` that starts no escape and an escape as U+FFFD, where the URL parser reads the letter
  for (const [target, name, value] of [
    ['http://h:1880/lh-answer?photo=/%zz[%41ü@+%', 'photo', '/%zz[Aü@ %'],
    ['/lh-answer?t=%zz%41ü', 't', '%zzAü'],
  ] as const) {
    it(`${target}: ${name} reads ${JSON.stringify(value)}, as the URL parser does`, function () {
      const req = { url: target } as unknown as Parameters<typeof queryParam>[0];
      assert.equal(new URL(target, 'http://x').searchParams.get(name), value);
      assert.equal(queryParam(req, name), value);
    });
  }

  // no space: a request target ends at one (the URL parser would trim it off the end, the HTTP parser never passes it)
  it(`never throws, and reads what the URL parser reads wherever that parses (seed ${seed})`, function () {
    console.log(`      query seed: ${seed} (LH_SEED=${seed} replays it)`);
    const rng = new Rng(seed);
    for (let i = 0; i < cases; i++) {
      let target = rng.pick(PREFIXES);
      const n = rng.int(0, 12);
      for (let k = 0; k < n; k++) target += rng.pick(PIECES);
      const req = { url: target } as unknown as Parameters<typeof queryParam>[0];
      for (const name of ['t', 'photo', 'view']) {
        let got: string | undefined;
        assert.doesNotThrow(() => (got = queryParam(req, name)), `${JSON.stringify(target)} ${name}`);
        let parsed: URL | undefined;
        try {
          parsed = new URL(target, 'http://x');
        } catch {
          parsed = undefined;
        }
        if (parsed) assert.equal(got, parsed.searchParams.get(name) ?? undefined, `${JSON.stringify(target)} ${name}`);
      }
    }
  });
});
