import assert from 'node:assert/strict';
import http from 'http';
import { inspect } from 'util';

import { closeLocal, listenLocal } from '../support/local-server';
import { builtNode } from '../support/node-suite';
import { helper, startServer, stopServer, tlsConfigNode, USER } from '../support/runtime';
import { until } from '../support/until';

const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}/;

function fakeJwt(): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ nameid: 'ab12', exp: Math.floor(Date.now() / 1000) + 3600 })}.c2lnbmF0dXJlLXNpZ25hdHVyZQ`;
}

/** An instrument that logs in and then refuses (400) every request, echoing the Authorization header and a URL with the password. */
async function startEcho(): Promise<{ url: string; close(): Promise<void> }> {
  const token = fakeJwt();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST' && /\/authenticate$/.test(req.url ?? '')) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            userName: USER.username,
            userId: 'ab12',
            token,
            expiresIn: 60,
            inactiveLogout: 60,
            logoutCountdown: 10,
          }),
        );
        return;
      }
      res.writeHead(400, { 'Content-Type': 'application/problem+json' });
      res.end(
        JSON.stringify({
          title: 'Bad Request',
          detail: `could not process (Authorization: ${req.headers.authorization ?? ''}) from http://${USER.username}:${USER.password}@instrument/`,
        }),
      );
    });
  });
  return { url: await listenLocal(server), close: () => closeLocal(server) };
}

describe('lh-run-watch: log lines', function () {
  before(startServer);
  after(stopServer);

  it('a refused run-status poll is logged through the redaction step: no token, no password', async function () {
    const echo = await startEcho();
    try {
      const texts: string[] = [];
      await helper.load(
        [tlsConfigNode, builtNode('lh-server'), builtNode('lh-run-watch')],
        [
          { id: 'server', type: 'lh-server', baseUrl: echo.url, instrumentUrl: '', timeout: 3000 },
          { id: 'watch', type: 'lh-run-watch', server: 'server', interval: 60, listen: false, wires: [[], [], [], []] },
        ],
        { server: { ...USER } },
      );
      const watch = helper.getNode('watch');
      for (const m of ['status', 'log', 'warn', 'error'])
        watch.on(`call:${m}`, (c: { args: unknown[] }) => texts.push(`${m}: ${inspect(c.args, { depth: 8 })}`));
      watch.receive({});
      await until(() => texts.some((t) => t.startsWith('warn:')), 'the refused poll to be logged');
      assert.ok(
        !texts.some((t) => JWT_PATTERN.test(t) || t.includes(USER.password)),
        `a secret in a log line:\n${texts.join('\n')}`,
      );
    } finally {
      await helper.unload();
      await echo.close();
    }
  });
});
