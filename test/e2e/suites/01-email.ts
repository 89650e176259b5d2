import assert from 'node:assert/strict';

import { request } from '../../support/embedded-red';
import { SmtpReceiver, startSmtpReceiver } from '../../support/smtp-receiver';
import { E2e, exampleFlow, formPost, pageForm, useEnv, USER } from './common';

interface Mail {
  from: string;
  to: string[];
  /** headers and body, quoted-printable soft breaks and escapes undone */
  text: string;
  /** as received */
  raw: string;
}

function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * The MIME parts of a mail, each with its content type and decoded body; a nested multipart (text and HTML beside an
 * attached photo: multipart/mixed holding multipart/alternative) is opened too.
 */
function mimeParts(raw: string): { type: string; body: string }[] {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1];
  const chunks = boundary ? raw.split(`--${boundary}`).slice(1, -1) : [raw];
  return chunks.flatMap((chunk) => {
    const split = chunk.search(/\r?\n\r?\n/);
    const head = chunk.slice(0, split);
    const type = /content-type:\s*([^;\r\n]+)/i.exec(head)?.[1].toLowerCase() ?? '';
    if (type.startsWith('multipart/')) return mimeParts(chunk);
    let body = chunk.slice(split).trim();
    if (/content-transfer-encoding:\s*base64/i.test(head))
      body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    return [{ type, body }];
  });
}

/** The next mail `smtp` receives, with its text decoded. */
async function nextMail(smtp: SmtpReceiver): Promise<Mail> {
  const mail = await smtp.nextMail();
  return { ...mail, text: decodeQuotedPrintable(mail.raw) };
}

export function emailSuite(ctx: E2e): void {
  describe('01 Instrument errors to e-mail', function () {
    let smtp: SmtpReceiver;
    useEnv(() => ({ LH_PUBLIC_URL: ctx.red.url }));
    beforeEach(async function () {
      smtp = await startSmtpReceiver();
    });
    afterEach(async function () {
      await smtp.close();
    });

    function deployExample(): Promise<void> {
      const { flow, credentials, node } = exampleFlow('01 Instrument errors to e-mail', ctx.sim);
      // the SMTP server of the test, plain SMTP on a random port; the login as the e-mail node's credentials; the
      // example ships the e-mail node disabled (quiet until configured): a user enables it after filling it in
      assert.equal(node('lh-ex01-mail').d, true, 'the example ships the e-mail node disabled');
      Object.assign(node('lh-ex01-mail'), { server: '127.0.0.1', port: String(smtp.port), secure: false, d: false });
      credentials['lh-ex01-mail'] = { userid: 'nodered@example.com', password: 'smtp-secret-7' };
      return ctx.red.deploy(flow, credentials);
    }

    it('mails a new runtime error, with the error text, to the lab team', async function () {
      await deployExample();
      const error = ctx.sim.injectPendingError({
        title: 'Tip pick-up failed',
        severity: 'Error',
        message: 'Channel 5 could not pick up a tip at position T3.',
      });
      const mail = await nextMail(smtp);
      assert.deepEqual(mail.to, ['lab-team@example.com']);
      assert.equal(mail.from, 'nodered@example.com');
      assert.match(mail.text, /^Subject: simulator: Error Tip pick-up failed\r?$/m);
      assert.ok(mail.text.includes('Channel 5 could not pick up a tip at position T3.'), mail.text);
      assert.ok(mail.text.includes(`Error id: ${error.id}`), mail.text);
      assert.ok(mail.text.includes('Responses: Retry, Abort, Ignore'), mail.text);
      assert.match(mail.text, /^Time: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)\r?$/m, 'the time carries its zone');

      // "answer from an e-mail": the link opens the answer page; only its button answers, once
      const link = /Answer here: (http\S+)/.exec(mail.text)?.[1] ?? '';
      assert.ok(link.startsWith(`${ctx.red.url}/lh-answer?t=`), mail.text);
      const page = await request('GET', link);
      assert.equal(page.status, 200);
      assert.match(page.text, /Tip pick-up failed/);
      assert.equal(
        ctx.sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime').length,
        0,
        'opening the link answered',
      );
      const answered = await formPost(link.split('?')[0], { ...pageForm(page.text), response: 'Retry', by: 'mail reader' });
      assert.equal(answered.status, 200, answered.text);
      assert.match(answered.text, /Answered with <b>Retry<\/b> by mail reader/);
      const puts = ctx.sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime');
      assert.equal(puts.length, 1);
      assert.equal((puts[0].body as { id: string }).id, error.id);
      const resolved = await nextMail(smtp);
      assert.match(resolved.text, /The error is resolved: Tip pick-up failed/);
    });

    it('attaches the deck photo (PNG) taken when the error was raised, with no extra node (issue 33)', async function () {
      await deployExample();
      ctx.sim.injectPendingError({ title: 'Liquid level not detected', message: 'channel 3, plate P2 well B4' });
      const mail = await nextMail(smtp);
      const boundary = /boundary="?([^";\r\n]+)"?/i.exec(mail.raw)?.[1] ?? '';
      const image = mail.raw
        .split(`--${boundary}`)
        .find((part) => /content-type:\s*image\/png/i.test(part.slice(0, part.search(/\r?\n\r?\n/))));
      assert.ok(image, `no image/png part: ${mail.raw.slice(0, 600)}`);
      const head = image.slice(0, image.search(/\r?\n\r?\n/));
      assert.match(head, /content-disposition:\s*attachment;\s*filename="?deck-[^"]*\.png/i);
      assert.match(head, /content-transfer-encoding:\s*base64/i);
      const bytes = Buffer.from(image.slice(head.length).replace(/\s+/g, ''), 'base64');
      assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'the attachment is a PNG');
      assert.ok(bytes.length > 100, `${bytes.length} bytes`);
    });

    it('keeps markup from the error text inert: plain text, and an HTML part with every tag escaped', async function () {
      await deployExample();
      ctx.sim.injectPendingError({
        title: 'Door <a href="http://evil.example/x">open</a>',
        message: 'See <img src="http://evil.example/p.png" onerror="alert(1)"> now',
      });
      const mail = await nextMail(smtp);
      const parts = mimeParts(mail.raw).map((p) => ({
        ...p,
        body: p.type === 'text/html' || p.type === 'text/plain' ? decodeQuotedPrintable(p.body) : p.body,
      }));
      const html = parts.filter((p) => p.type === 'text/html');
      const plain = parts.filter((p) => p.type === 'text/plain');
      assert.equal(plain.length, 1, `parts: ${parts.map((p) => p.type).join(', ')}`);
      assert.equal(html.length, 1, `parts: ${parts.map((p) => p.type).join(', ')}`);
      assert.ok(plain[0].body.includes('Door <a href="http://evil.example/x">open</a>'), plain[0].body);
      for (const part of html) {
        assert.ok(!/<a[\s>]/i.test(part.body) && !/<img/i.test(part.body), `markup became HTML: ${part.body}`);
        assert.ok(part.body.includes('&lt;a href') && part.body.includes('&lt;img'), part.body);
      }
    });

    it('keeps the lh-server and e-mail passwords and the session token out of the flow export (GET /flows)', async function () {
      await deployExample();
      ctx.sim.injectPendingError({ title: 'Door open' });
      await nextMail(smtp); // the flow has logged in and worked
      const tokens = new Set(
        ctx.sim.requests.map((r) => r.authorization?.replace(/^Bearer\s+/i, '')).filter((t): t is string => !!t),
      );
      assert.ok(tokens.size > 0, 'the simulator saw no bearer token');
      const exported = await ctx.red.request('GET', '/flows');
      assert.equal(exported.status, 200);
      assert.ok(exported.text.includes('lh-server-sim'), 'the export holds the flow');
      for (const secret of [USER.password, 'smtp-secret-7', ...tokens])
        assert.ok(!exported.text.includes(secret), `GET /flows shows a secret: ${secret.slice(0, 12)}...`);
    });
  });
}
