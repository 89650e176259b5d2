import assert from 'node:assert/strict';
import http from 'http';

import type { AddressInfo } from 'net';

import { request } from '../../support/embedded-red';
import { debugValue, E2e, exampleFlow, formPost, pageForm, useEnv } from './common';

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
    });
    useEnv(() => ({ LH_PUBLIC_URL: ctx.red.url, CHAT_WEBHOOK_URL: hook.url }));
    beforeEach(async function () {
      const { flow, credentials } = exampleFlow('02 ', ctx.sim);
      assert.ok(!JSON.stringify(flow).includes('127.0.0.1:1880'), 'the example names a host and port');
      await ctx.red.deploy(flow, credentials);
    });
    afterEach(async function () {
      await hook.close();
    });

    const puts = () => ctx.sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime');

    it('posts {text} with an answer link to the webhook; the page answers the error once, and the chat hears who did', async function () {
      const error = ctx.sim.injectPendingError({
        title: 'Clot detected',
        severity: 'Error',
        message: 'Channel 2 detected a clot in Plate1 B4.',
        responses: ['Retry', 'Abort'],
      });
      const text = chatText(await hook.next());
      assert.ok(text.startsWith('simulator: Error Clot detected\nChannel 2 detected a clot in Plate1 B4.'), text);
      const link = /^Answer: (http\S+)$/m.exec(text)?.[1] ?? '';
      assert.ok(link.startsWith(`${ctx.red.url}/lh-answer?t=`), text);

      // the deck photo as a signed, expiring link (chat takes URLs, not bytes), served never cached (issue 33)
      const photoLink = /^Deck photo: (http\S+)$/m.exec(text)?.[1] ?? '';
      assert.equal(photoLink, `${link}&photo=raised`, text);
      const photo = await request('GET', photoLink);
      assert.equal(photo.status, 200);

      // the chat service unfurls the link: a plain GET with a bot user agent changes nothing
      const preview = await request('GET', link);
      assert.equal(preview.status, 200);
      assert.match(preview.text, /<button type="submit" name="response" value="#0"[^>]*>Retry<\/button>/);
      assert.match(preview.text, /<button type="submit" name="response" value="#1"[^>]*>Abort<\/button>/);
      assert.equal(puts().length, 0, 'the preview answered the error');

      // a person presses Abort
      const answered = await formPost(link.split('?')[0], { ...pageForm(preview.text), response: '#1', by: 'Kim' });
      assert.equal(answered.status, 200, answered.text);
      assert.match(answered.text, /Answered with <b>Abort<\/b> by Kim/);
      assert.equal(puts().length, 1);
      assert.deepEqual(puts()[0].body as { id: string; selectedResponse: string }, {
        ...(puts()[0].body as object),
        id: error.id,
        selectedResponse: 'Abort',
      });
      assert.ok(!ctx.sim.state.pendingErrors.some((e) => e.id === error.id), 'the error is still pending');

      // the chat hears who answered, and that the error is resolved
      const heard = [chatText(await hook.next()), chatText(await hook.next())].sort();
      assert.equal(heard[0], `Error ${error.id}: answered with Abort by Kim on the answer page`);
      assert.match(heard[1], /^\u2714 resolved: simulator: Error Clot detected$/);

      // the same link later: already answered, by whom, and nothing more is sent
      const again = await request('GET', link);
      assert.match(again.text, /Already answered with <b>Abort<\/b> by Kim/);
      const second = await formPost(link.split('?')[0], { ...pageForm(preview.text), response: '#0' });
      assert.equal(second.status, 403, 'a used form token answered again');

      // an answer from the flow (the example's button) comes second: "already answered", nothing sent
      const refused = ctx.red.nextDebug('lh-ex02-notdbg');
      await ctx.red.inject('lh-ex02-retry');
      assert.match(JSON.stringify(debugValue(await refused)), /already answered/);
      // the poll saw the error go, so the ledger let it go (an id may come back as a new error): the late answer may
      // reach the instrument, which refuses it; a second answer is never applied
      assert.ok(
        puts()
          .slice(1)
          .every((r) => r.status >= 400),
        'a second answer was applied',
      );
    });

    it('refuses a forged link with a plain 403 page and sends nothing', async function () {
      ctx.sim.injectPendingError({ title: 'Door open' });
      const link = /^Answer: (http\S+)$/m.exec(chatText(await hook.next()))?.[1] ?? '';
      const forged = link.replace(/t=[A-Za-z0-9_-]{4}/, 't=AAAA');
      const res = await request('GET', forged);
      assert.equal(res.status, 403);
      assert.match(res.text, /This link is not valid/);
      assert.equal(puts().length, 0);

      // the page's routes go with the flow, as core http-in's do
      await ctx.red.deploy([]);
      assert.equal((await request('GET', link)).status, 404);
    });
  });
}
