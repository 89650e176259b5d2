import assert from 'node:assert/strict';
import http from 'http';
import type { AddressInfo } from 'net';
import { request } from '../../support/embedded-red';
import { E2e, exampleFlow } from './common';

interface Posted {
  method: string;
  contentType: string;
  body: unknown;
}

/** A local stand-in for a chat service's incoming webhook: hands over each request it receives. */
async function webhookReceiver(): Promise<{ url: string; next(): Promise<Posted>; close(): Promise<void> }> {
  const waiting: ((p: Posted) => void)[] = [];
  const received: Posted[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      res.end('ok');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the assertion on the body says so
      }
      const posted: Posted = { method: req.method ?? '', contentType: req.headers['content-type'] ?? '', body };
      const w = waiting.shift();
      if (w) w(posted);
      else received.push(posted);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/B000/xyz`,
    next: () => {
      const p = received.shift();
      return p ? Promise.resolve(p) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function chatText(p: Posted): string {
  assert.equal(p.method, 'POST');
  assert.match(p.contentType, /^application\/json/);
  assert.ok(
    p.body && typeof p.body === 'object' && typeof (p.body as { text?: unknown }).text === 'string',
    `not {text}: ${JSON.stringify(p.body)}`,
  );
  return (p.body as { text: string }).text;
}

export function chatSuite(ctx: E2e): void {
  describe('02 Instrument errors to chat, answered from chat', function () {
    let hook: Awaited<ReturnType<typeof webhookReceiver>>;
    beforeEach(async function () {
      hook = await webhookReceiver();
      const { flow, credentials, node } = exampleFlow('02 ', ctx.sim);
      node('lh-ex02-hook').url = hook.url;
      // the answer links point at this Node-RED
      const tab = node('lh-ex02-tab') as { env?: { name: string; value: string; type: string }[] };
      const env = tab.env?.find((e) => e.name === 'ANSWER_URL');
      assert.ok(env, 'the example tab sets ANSWER_URL');
      env.value = `${ctx.red.url}/lh/answer`;
      await ctx.red.deploy(flow, credentials);
    });
    afterEach(async function () {
      await hook.close();
    });

    it('posts {text} with answer links to the webhook; a link answers the error on the instrument, once', async function () {
      const error = ctx.sim.injectPendingError({
        title: 'Clot detected',
        severity: 'Error',
        message: 'Channel 2 detected a clot in Plate1 B4.',
        responses: ['Retry', 'Abort'],
      });
      const text = chatText(await hook.next());
      assert.ok(text.startsWith('simulator: Error Clot detected\nChannel 2 detected a clot in Plate1 B4.'), text);
      const links = [...text.matchAll(/^(\w+): (http\S+)$/gm)].map((m) => ({ response: m[1], url: m[2] }));
      assert.deepEqual(
        links.map((l) => l.response),
        ['Retry', 'Abort'],
      );
      const abort = links[1].url;
      assert.equal(abort, `${ctx.red.url}/lh/answer?errorId=${encodeURIComponent(error.id)}&response=Abort`);

      // a person follows the link
      const answered = await request('GET', abort);
      assert.equal(answered.status, 200, answered.text);
      assert.equal(answered.text, `Answered ${error.id} with Abort.`);
      const puts = ctx.sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime');
      assert.equal(puts.length, 1);
      assert.deepEqual(puts[0].body as { id: string; selectedResponse: string }, {
        ...(puts[0].body as object),
        id: error.id,
        selectedResponse: 'Abort',
      });
      assert.ok(!ctx.sim.state.pendingErrors.some((e) => e.id === error.id), 'the error is still pending');

      // the chat hears that it is resolved
      assert.match(chatText(await hook.next()), /^\u2714 resolved: simulator: Error Clot detected$/);

      // a second click is refused with the instrument's reason, and sends nothing more to the instrument
      const again = await request('GET', abort);
      assert.equal(again.status, 409);
      assert.ok(again.text.length > 0);
      assert.equal(ctx.sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime').length, 1);
    });
  });
}
