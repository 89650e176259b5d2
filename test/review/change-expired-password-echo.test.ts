/**
 * README "Security": the Test connection report and every text leaving the package keep no password, "also when an
 * instrument echoes them"; no secret enters an audit record. The editor's Change password sends the typed old and
 * new passwords; an instrument refusing the change with a text that quotes them (`password 'N3w…' was used before`)
 * got them back into the editor's error answer and into the audit record's outcome reason: only the configured
 * secrets and secret-named fields were taken out, and the new password is neither. Real Node-RED, the editor
 * endpoint over HTTP, an instrument that echoes the request body in free text.
 */
import assert from 'node:assert/strict';
import fs from 'fs';
import http from 'http';

import { useAuditDir } from '../audit/chain-support';
import { closeLocal, listenLocal } from '../support/local-server';
import { helper, packageNodes, runtimeSettings, USER } from '../support/runtime';

const NEW_PASSWORD = 'N3w-Pw-echo-71';
const OLD_PASSWORD = 'Old-Pw-echo-52';

/** An instrument that refuses every request, quoting what it was sent in plain words. */
async function startEcho(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      let said = body;
      try {
        const b = JSON.parse(body) as Record<string, string>;
        said = `user ${b.userName} changed ${b.oldPassword} to ${b.newPassword}`;
      } catch {
        // not JSON: quoted as it came
      }
      res.writeHead(400, { 'Content-Type': 'application/problem+json' });
      res.end(JSON.stringify({ title: 'Bad Request', detail: `refused: ${said} was used before` }));
    });
  });
  return { url: await listenLocal(server), close: () => closeLocal(server) };
}

describe('review: Change password keeps the typed passwords an instrument echoes out of the answer and the audit', function () {
  const audit = useAuditDir(runtimeSettings);
  let echo: Awaited<ReturnType<typeof startEcho>> | undefined;

  afterEach(async function () {
    await helper.unload();
    await echo?.close();
    echo = undefined;
  });

  it('the error answer and the chain keep the refusal, not the passwords', async function () {
    echo = await startEcho();
    await helper.load(
      packageNodes(),
      [{ id: 'server', type: 'lh-server', baseUrl: echo.url, instrumentUrl: '', clientKey: 'k1', timeout: 3000 }],
      { server: { ...USER } },
    );
    const res = await helper
      .request()
      .post('/lh-server/server/change-expired-password')
      .set('Content-Type', 'application/json')
      .send({ oldPassword: OLD_PASSWORD, newPassword: NEW_PASSWORD });
    assert.equal(res.status, 502, res.text);
    assert.match(res.text, /refused: user admin changed \*\*\* to \*\*\* was used before/);
    await helper.unload(); // the chain closed, every record written
    const dir = audit.dir();
    const chain = fs
      .readdirSync(dir)
      .map((f) => fs.readFileSync(`${dir}/${f}`, 'utf8'))
      .join('\n');
    assert.match(chain, /change-expired-password/);
    for (const secret of [NEW_PASSWORD, OLD_PASSWORD]) {
      assert.ok(!res.text.includes(secret), `the editor got ${secret} back: ${res.text}`);
      assert.ok(!chain.includes(secret), `the audit chain holds ${secret}`);
    }
  });
});
