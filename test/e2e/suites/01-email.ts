import assert from 'node:assert/strict';
import type { AddressInfo } from 'net';
import { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { E2e, USER, exampleFlow } from './common';

interface Mail {
  from: string;
  to: string[];
  /** headers and body, quoted-printable soft breaks and escapes undone */
  text: string;
}

function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A local SMTP server that accepts any login over plain TCP and hands over each mail it receives. */
async function smtpServer(): Promise<{ port: number; nextMail(): Promise<Mail>; close(): Promise<void> }> {
  const waiting: ((m: Mail) => void)[] = [];
  const received: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      cb(null, { user: auth.username });
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail: Mail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          text: decodeQuotedPrintable(Buffer.concat(chunks).toString('utf8')),
        };
        const w = waiting.shift();
        if (w) w(mail);
        else received.push(mail);
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    nextMail: () => {
      const m = received.shift();
      return m ? Promise.resolve(m) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export function emailSuite(ctx: E2e): void {
  describe('01 Instrument errors to e-mail', function () {
    let smtp: Awaited<ReturnType<typeof smtpServer>>;
    beforeEach(async function () {
      smtp = await smtpServer();
    });
    afterEach(async function () {
      await smtp.close();
    });

    function deployExample(): Promise<void> {
      const { flow, credentials, node } = exampleFlow('01 ', ctx.sim);
      // the SMTP server of the test, plain SMTP on a random port; the login as the e-mail node's credentials
      Object.assign(node('lh-ex01-mail'), { server: '127.0.0.1', port: String(smtp.port), secure: false });
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
      const mail = await smtp.nextMail();
      assert.deepEqual(mail.to, ['lab-team@example.com']);
      assert.equal(mail.from, 'nodered@example.com');
      assert.match(mail.text, /^Subject: simulator: Error Tip pick-up failed\r?$/m);
      assert.ok(mail.text.includes('Channel 5 could not pick up a tip at position T3.'), mail.text);
      assert.ok(mail.text.includes(`Error id: ${error.id}`), mail.text);
      assert.ok(mail.text.includes('Responses: Retry, Abort, Ignore'), mail.text);
    });

    it('keeps the lh-server and e-mail passwords and the session token out of the flow export (GET /flows)', async function () {
      await deployExample();
      ctx.sim.injectPendingError({ title: 'Door open' });
      await smtp.nextMail(); // the flow has logged in and worked
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
