/**
 * Review finding (the first hour): a user who adds an lh-server node of their own for `npx lh-simulator` (the
 * examples' node has the option on; a new node has it off) and presses Test connection read only that B's certificate
 * is not trusted, to add the instrument's CA in a TLS configuration node or switch verification off: not that the
 * dialog's "Trust the bundled lh-simulator test CA" is the step for the simulator, and switching verification off is
 * the advice a newcomer would take. When the certificate is the simulator's (a TLS handshake with the bundled test CA
 * verifies it; no request is sent), the check now names that option. A self-signed certificate of anything else gets
 * no such hint.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import fs from 'fs';
import https from 'https';
import os from 'os';
import path from 'path';

import type { AddressInfo } from 'net';

import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow, USER } from '../support/runtime';

interface Report {
  ok: boolean;
  checks: { name: string; ok: boolean; message: string }[];
}

const OPTION = /tick "Trust the bundled lh-simulator test CA" in this lh-server node/;

describe('review: Test connection of a new lh-server node on the simulator names the simulator CA option', function () {
  this.timeout(30000);
  const sim = useInstrument({ adminServer: true });
  let dir = '';
  let other: https.Server | undefined;
  let otherUrl = '';

  before(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-other-b-'));
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2'] //
        .concat(['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']),
      { cwd: dir, stdio: 'pipe' },
    );
    const read = (f: string): string => fs.readFileSync(path.join(dir, f), 'utf8');
    other = https.createServer({ cert: read('cert.pem'), key: read('key.pem') }, (_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => other?.listen(0, '127.0.0.1', resolve));
    otherUrl = `https://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });
  after(async function () {
    other?.closeAllConnections();
    if (other) await new Promise((resolve) => other?.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async function () {
    const server = serverFlow(sim); // a Node-RED running, as the editor's is
    await loadFlow(server.nodes, server.credentials);
  });

  async function testConnection(body: Record<string, unknown>): Promise<Report> {
    const res = await helper
      .request()
      .post('/lh-server/test-connection')
      .send({ ...USER, timeout: 3000, ...body });
    assert.equal(res.status, 200);
    return res.body as Report;
  }
  const b = (report: Report): string => report.checks.find((c) => c.name === 'B')?.message ?? '';

  it("the simulator's B without the option: not trusted, and the option that trusts it named", async function () {
    const report = await testConnection({ baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl, simulatorCa: false });
    assert.equal(report.ok, false);
    assert.match(b(report), /not trusted/);
    assert.match(b(report), OPTION);
    const before = sim.requests.filter((r) => r.api === 'B').length;
    assert.equal(before, 0, 'the hint sent no request to B');
    const ticked = await testConnection({ baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl, simulatorCa: true });
    assert.equal(ticked.ok, true, JSON.stringify(ticked));
  });

  it('another self-signed B: not trusted, add its certificate; the simulator option is not named', async function () {
    const report = await testConnection({ baseUrl: sim.baseUrl, instrumentUrl: otherUrl, simulatorCa: false });
    assert.match(b(report), /not trusted.*TLS configuration node/s);
    assert.doesNotMatch(b(report), /lh-simulator/);
  });
});
