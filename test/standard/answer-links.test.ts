// Issue 18, points 2 and 3, in a standard Node-RED (tarball install, node-red-node-email installed by the user, no
// LH_PUBLIC_URL unless the test sets it), with example 01 (e-mail) deployed through the admin API and a local SMTP
// receiver: a missing public URL never costs the e-mail; an answer link survives a redeploy and a restart.
import assert from 'node:assert/strict';
import { randomBytes } from 'crypto';
import fs from 'fs';
import path from 'path';

import { Simulator } from '../../src/simulator';
import { SmtpReceiver, startSmtpReceiver } from '../support/smtp-receiver';
import { example, FlowNode, freshUserDir, namedPackages, StandardRed, startRed } from './standard-red';

const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
const SMTP_PASSWORD = `smtp-${randomBytes(6).toString('hex')}`;
const PUBLIC = 'https://lab.example.org:1880';

/** Example 01 (e-mail) as a user sets it up: lh-server at the simulator, the e-mail node filled in and enabled. */
function example01(sim: Simulator, smtpPort: number): FlowNode[] {
  return example('01 Instrument errors to e-mail').map((n) => {
    if (n.type === 'lh-server')
      return {
        ...n,
        baseUrl: sim.baseUrl,
        instrumentUrl: sim.instrumentUrl,
        credentials: { username: 'admin', password: PASSWORD },
      };
    if (n.type === 'lh-error-poll') return { ...n, interval: 0.5 };
    if (n.type === 'e-mail')
      return {
        ...n,
        server: '127.0.0.1',
        port: String(smtpPort),
        secure: false,
        tls: false,
        d: false,
        credentials: { userid: 'nodered@example.com', password: SMTP_PASSWORD },
      };
    return n;
  });
}

/** The next mail's text, quoted-printable undone (a mail that never comes fails the test in 20 s). */
async function nextMailText(smtp: SmtpReceiver): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const mail = await Promise.race([
    smtp.nextMail(),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no e-mail within 20 s')), 20_000))),
  ]).finally(() => clearTimeout(timer));
  return mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

describe('standard Node-RED: answer links (issue 18 points 2 and 3)', function () {
  this.timeout(120_000);
  let sim: Simulator;
  let smtp: SmtpReceiver;
  let userDir: string;
  let red: StandardRed | undefined;
  before(async function () {
    sim = new Simulator({ users: [{ username: 'admin', password: PASSWORD }] });
    await sim.start();
    smtp = await startSmtpReceiver();
    userDir = await freshUserDir(namedPackages());
  });
  after(async function () {
    await red?.stop();
    await smtp.close();
    await sim.stop();
  });

  it('without LH_PUBLIC_URL the error e-mail still arrives, saying why it has no link; the log warns once', async function () {
    red = await startRed(userDir);
    await red.deploy(example01(sim, smtp.port));
    sim.injectPendingError({ title: 'Tip pick-up failed', severity: 'Error' });
    const first = await nextMailText(smtp);
    assert.match(first, /Tip pick-up failed/);
    assert.match(first, /No answer link: the environment variable LH_PUBLIC_URL is not set/, first);
    assert.doesNotMatch(first, /lh-answer\?t=/);
    sim.injectPendingError({ title: 'Clot detected', severity: 'Error' });
    assert.match(await nextMailText(smtp), /Clot detected[\s\S]*No answer link/);
    assert.equal(red.log().match(/notifications go out without the answer link/g)?.length, 1, red.log());
    await red.stop();
  });

  it('a link sent before a redeploy and a restart still opens the answer page; a foreign link gets advice, not blame', async function () {
    red = await startRed(userDir, { env: { LH_PUBLIC_URL: PUBLIC } });
    await red.deploy(example01(sim, smtp.port));
    const error = sim.injectPendingError({ title: 'Door open', severity: 'Error', responses: ['Retry', 'Abort'] });
    // the errors of the test before are still pending: this Node-RED mails them too, first
    let text = await nextMailText(smtp);
    while (!text.includes('Door open')) text = await nextMailText(smtp);
    const link = /(https:\/\/lab\.example\.org:1880\/lh-answer\?t=[A-Za-z0-9_.-]+)/.exec(text)?.[1];
    assert.ok(link, text);
    // the page is reached through the public address (a reverse proxy); here straight at this Node-RED
    const onThisRed = (r: StandardRed): string => link.replace(PUBLIC, r.url);
    const opens = async (r: StandardRed, when: string): Promise<void> => {
      const page = await r.request('GET', onThisRed(r).slice(r.url.length));
      assert.equal(page.status, 200, `${when}: ${page.text}`);
      assert.match(page.text, /Door open/, `${when}: ${page.text}`);
      assert.match(page.text, /<form/, `${when}: ${page.text}`);
    };
    await opens(red, 'as sent');

    await red.deploy(example01(sim, smtp.port));
    await opens(red, 'after a redeploy');

    await red.stop();
    red = await startRed(userDir, { env: { LH_PUBLIC_URL: PUBLIC } });
    await opens(red, 'after a restart');

    // the user opens the answer page's dialog now and deploys: the dialog stores a secret; links already sent still answer
    const withSecret = example01(sim, smtp.port).map((n) =>
      n.type === 'lh-answer-page' ? { ...n, credentials: { secret: `dialog-${randomBytes(16).toString('hex')}` } } : n,
    );
    await red.deploy(withSecret);
    await opens(red, 'after the dialog stored a secret');
    assert.equal(fs.statSync(path.join(userDir, 'lh-link-key')).mode & 0o777, 0o600, 'the key file is for its owner only');
    assert.ok(
      !fs
        .readFileSync(path.join(userDir, 'flows.json'), 'utf8')
        .includes(fs.readFileSync(path.join(userDir, 'lh-link-key'), 'utf8').trim()),
    );

    // a link no answer page here signed (another Node-RED's, or a page since deleted): no accusation, a way forward
    const [claims] = new URL(link).searchParams.get('t')?.split('.') ?? [];
    const foreign = await red.request('GET', `/lh-answer?t=${claims}.${Buffer.alloc(32, 7).toString('base64url')}`);
    assert.equal(foreign.status, 403);
    assert.doesNotMatch(foreign.text, /altered|tamper/i);
    assert.match(foreign.text, /answer it in the Node-RED editor or on the instrument/);
    assert.equal(
      sim.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime').length,
      0,
      'opening the page answered nothing',
    );
    assert.ok(error.id);
  });
});
