import assert from 'node:assert/strict';
import { randomBytes } from 'crypto';

import { PDFDocument } from 'pdf-lib';

import { until } from '../../support/embedded-red';
import { requestText } from '../../support/http-text';
import { SmtpReceiver, startSmtpReceiver } from '../../support/smtp-receiver';
import { E2e, exampleFlow, useEnv } from './common';

const LIMS_TOKEN = `lims-${randomBytes(8).toString('hex')}`;

/** The base64 body of the MIME part whose headers name `filename`, decoded. */
function attachment(mail: string, filename: string): Buffer | undefined {
  const parts = mail.split(/\r?\n--[^\r\n]+\r?\n/);
  const part = parts.find((p) => p.includes(`filename=${filename}`) || p.includes(`filename="${filename}"`));
  if (!part) return undefined;
  const body = part
    .split(/\r?\n\r?\n/)
    .slice(1)
    .join('\n');
  return Buffer.from(body.replace(/--[^\s]*--\s*$/, '').replace(/\s+/g, ''), 'base64');
}

export function limsRunSuite(ctx: E2e): void {
  describe('06 Start a run from a LIMS request', function () {
    let smtp: SmtpReceiver;
    beforeEach(async function () {
      smtp = await startSmtpReceiver();
    });
    afterEach(async function () {
      await smtp.close();
    });

    useEnv(() => ({ LIMS_TOKEN }));

    /** 06 and its e-mail add-on (06 … by e-mail), imported together, as a user who wants the report mailed does. */
    async function deployExample(): Promise<void> {
      const { flow, credentials, node } = exampleFlow('06 Start a run', ctx.sim);
      const mail = exampleFlow('06 Run reports by e-mail', ctx.sim);
      flow.push(...mail.flow.filter((n) => !flow.some((m) => m.id === n.id)));
      // the example ships the e-mail node disabled (quiet until configured): a user enables it after filling it in
      assert.equal(mail.node('lh-ex06m-mail').d, true, 'the example ships the e-mail node disabled');
      Object.assign(mail.node('lh-ex06m-mail'), {
        server: '127.0.0.1',
        port: String(smtp.port),
        secure: false,
        tls: false,
        d: false,
      });
      credentials['lh-ex06m-mail'] = { userid: 'nodered@example.com', password: 'smtp-secret-6' };
      Object.assign(node('lh-ex06-run'), { pollInterval: '0.05' });
      Object.assign(node('lh-ex06-watch'), { interval: '0.5' });
      Object.assign(mail.node('lh-ex06m-watch'), { interval: '0.5' });
      await ctx.red.deploy(flow, credentials);
    }

    /** As the LIMS sends it: JSON with the shared token. */
    const post = (body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
      const data = Buffer.from(JSON.stringify(body));
      return requestText(
        `${ctx.red.url}/lims/run`,
        {
          method: 'POST',
          agent: false,
          headers: { 'Content-Type': 'application/json', 'Content-Length': data.length, 'X-LIMS-Token': LIMS_TOKEN },
        },
        data,
      ).then((r) => ({ status: r.status, body: JSON.parse(r.text) as Record<string, unknown> }));
    };

    it('answers 202 with the run id, and mails the PDF report when the run has finished', async function () {
      ctx.sim.runs.setSpeed(300); // the demo protocol runs about 2 s
      await deployExample();
      const res = await post({ protocol: 'Demo protocol', simulate: true });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.protocolId, 1);
      assert.equal(res.body.protocolName, 'Demo protocol');
      assert.equal(res.body.state, 'Running');
      const create = ctx.sim.requests.filter((r) => r.path === '/api/v1/protocol-run/create');
      assert.deepEqual(
        create.map((r) => r.body),
        [{ protocolId: 1, simulate: true, recompile: false }],
      );
      const mail = await until('the report mail', () => smtp.mails[0]?.raw, 15_000);
      const [record] = ctx.sim.runs.records.all;
      assert.equal(res.body.runId, record.id);
      assert.match(mail, /^Subject: Run completed: Demo protocol\r?$/m);
      const pdf = attachment(mail, `run-${record.id}.pdf`);
      assert.ok(pdf, mail.slice(0, 2000));
      assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
      assert.equal((await PDFDocument.load(pdf)).getPageCount(), 1);
    });

    it('answers 409 naming the running protocol when a run is in progress, and sends no second create', async function () {
      ctx.sim.runs.setSpeed(1);
      await deployExample();
      ctx.sim.runs.create({ protocolId: 1 }, 'operator');
      ctx.sim.clearRequests();
      const res = await post({ protocol: 2 });
      assert.equal(res.status, 409);
      assert.match(String(res.body.error), /start refused: a run of protocol 'Demo protocol' \(1\) is in progress/);
      assert.equal(ctx.sim.requests.filter((r) => r.path === '/api/v1/protocol-run/create').length, 0);
      ctx.sim.runs.abort();
    });

    it('answers 400 for a malformed request without asking the instrument, 422 for an unknown protocol', async function () {
      await deployExample();
      ctx.sim.clearRequests();
      for (const body of [{ protocol: true }, { protocol: 'Demo protocol', simulate: 'yes' }, { protocol: -1 }, {}]) {
        const res = await post(body);
        assert.equal(res.status, 400, JSON.stringify(body));
      }
      // only the run watch's own polls reached the instrument
      assert.deepEqual(
        ctx.sim.requests.filter((r) => !['/api/v1/protocol-run', '/api/v1/authenticate'].includes(r.path)),
        [],
      );
      const unknown = await post({ protocol: 'ELISA' });
      assert.equal(unknown.status, 422);
      assert.match(String(unknown.body.error), /"ELISA" is not a protocol of the instrument/);
    });
  });
}
