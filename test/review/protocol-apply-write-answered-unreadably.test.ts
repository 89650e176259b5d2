/**
 * Review finding: apply's msg.unconfirmed and msg.notApplied disagreed with the audit trail for one write. A create
 * the instrument answered 201 with a body that is not JSON (an ASP.NET service writing `Created` as text, a proxy's
 * page), or answered with a redirect, is recorded by the audit trail with outcome unknown (the instrument may have
 * made it; here it did), but apply listed it in msg.notApplied: a flow was told a step was not created that the
 * instrument had created, and the audit trail said otherwise. Such a write is in msg.unconfirmed now, as a 5xx is.
 * So is a create answered with a body larger than the client takes (the audit trail: unknown, as it answered).
 * A proxy in front of the simulator rewrites the answer to the create after the simulator made the step.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { type AuditHook } from '../../src/client';
import { applyPlan, ApplyStopped, readProtocol } from '../../src/nodes/lh-protocol/apply-plan';
import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { useAuditDir } from '../audit/chain-support';
import { answerWith, pathOf, useAnswerProxy } from '../support/answer-proxy';
import { useClients } from '../support/client-suite';
import { configuredNode, useInstrument } from '../support/node-suite';
import { planned } from '../support/protocol-plan';
import { helper, runtimeSettings } from '../support/runtime';

type Msg = Record<string, unknown>;
const actions = (changes: unknown): string[] => (changes as Msg[]).map((c) => String(c.action));

describe('review: lh-protocol apply of a write answered 2xx unreadably or 3xx agrees with the audit trail', function () {
  const sim = useInstrument();
  const audit = useAuditDir(runtimeSettings);
  /** the lh-server's baseUrl: the proxy's (set once it listens; read when each flow is loaded) */
  const server: Record<string, unknown> = {};
  const { load } = configuredNode(
    sim,
    { id: 'protocol', type: 'lh-protocol' },
    { only: ['lh-server', 'lh-protocol'], server: { config: server } },
  );
  /** the answer given instead of the simulator's to a create (POST …/step), once the simulator answered it */
  let instead: { status: number; headers: http.OutgoingHttpHeaders; body: string } | undefined;

  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, up, res) => {
      if (!instead || req.method !== 'POST' || !pathOf(req).endsWith('/step') || up.status >= 300) return false;
      answerWith(res, instead.status, instead.headers, instead.body);
      return true;
    },
  );
  before(function () {
    server.baseUrl = proxy.url;
  });
  afterEach(function () {
    instead = undefined;
  });

  const answers = [
    { what: '201 with text that is not JSON', status: 201, headers: { 'content-type': 'text/plain' }, body: 'Created' },
    { what: 'a redirect (302)', status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' }, body: '' },
  ];
  for (const answer of answers) {
    it(`a create answered ${answer.what}: in msg.unconfirmed, as the audit trail records it (unknown)`, async function () {
      const node = await load({ operation: 'msg', protocolId: '' });
      const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
      const desired = {
        steps: [...exported.steps, { name: 'Close lid', stepType: 'LidStep', disabled: false, position: 'HeaterShaker1' }],
      };
      const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg;
      assert.deepEqual(actions(plan.changes), ['create']);
      instead = answer;
      const failed = await node.runFailing({ operation: 'apply', plan });
      instead = undefined;
      assert.ok(
        sim.state.protocols.get(1)?.steps.some((s) => s.name === 'Close lid'),
        'the instrument made the step',
      );
      await helper.unload(); // the audit trail's outcomes written
      const outcomes = audit.records().filter((r) => r.phase === 'outcome' && r.operation === 'create-step');
      assert.equal(outcomes.length, 1);
      assert.equal((outcomes[0] as unknown as { outcome: { result: string } }).outcome.result, 'unknown');
      assert.deepEqual(actions(failed.notApplied), [], 'a write the audit trail records as unknown is not "not applied"');
      assert.deepEqual(actions(failed.unconfirmed), ['create']);
      assert.match(String((failed._error as Msg).message), /Not known whether applied \(1\): create "Close lid"/);
    });
  }
});

describe('review: lh-protocol apply of a write answered with a body larger than the limit (client, real HTTP)', function () {
  const { sim, make } = useClients();

  // the create is made by the simulator, then answered 201 with a body of 64 KiB (the client here takes 16 KiB)
  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, up, res) => {
      if (req.method !== 'POST' || !pathOf(req).endsWith('/step') || up.status >= 300) return false;
      answerWith(res, up.status, up.headers, JSON.stringify({ padding: 'x'.repeat(64 * 1024) }));
      return true;
    },
  );

  it('a create answered so: in unconfirmed, as the audit trail records it (unknown)', async function () {
    const outcomes: { operation: string; result: string }[] = [];
    const audit: AuditHook = {
      intent: (request) => ({ id: `${outcomes.length}-${request.operation}`, durable: Promise.resolve() }),
      outcome: (_id, operation, outcome) => {
        outcomes.push({ operation, result: outcome.result });
        return Promise.resolve();
      },
    };
    const client = make({ baseUrl: proxy.url, audit, maxResponseBytes: 16 * 1024, retries: 0 });
    const pid = sim.addProtocol('Answered large');
    const before = await readProtocol(client.runs, pid, 'plan');
    const desired = readDesired({ steps: [{ name: 'Close lid', stepType: 'LidStep', position: 'HeaterShaker1' }] }, 'plan');
    const { plan: made } = planned(before.export, desired, { protocolId: pid, instrument: client.baseUrl });
    const plan = readPlan(JSON.parse(JSON.stringify(made)), 'apply');
    const failed = await applyPlan({ prep: client.prep, runs: client.runs, audited: (_why, work) => work() }, plan, 'apply').then(
      () => assert.fail('applied'),
      (e: unknown) => e,
    );
    await client.transport.outcomesWritten();
    assert.ok(failed instanceof ApplyStopped, String(failed));
    assert.match(failed.message, /larger than 16384 bytes/);
    assert.equal(sim.state.protocols.get(pid)?.steps.length, 1, 'the instrument made the step');
    assert.deepEqual(outcomes, [{ operation: 'create-step', result: 'unknown' }]);
    assert.deepEqual(
      failed.notApplied.map((c) => c.action),
      [],
    );
    assert.deepEqual(
      failed.unconfirmed.map((c) => c.action),
      ['create'],
    );
  });
});
