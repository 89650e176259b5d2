/**
 * README "Audit trail": `who` names "the http-in user behind the msg (httpNodeAuth's Basic user name)". Without
 * httpNodeAuth nothing checks an Authorization header: any caller of an http-in flow (or anyone with an answer link)
 * can send `Basic base64("admin:x")`. The record must then name no user, never the one the caller typed into the
 * header; with httpNodeAuth (Node-RED checked the password before the flow ran) the user is named as before.
 */
import assert from 'node:assert/strict';

import { AuditRecord } from '../../src/audit';
import { useAuditDir } from '../audit/chain-support';
import { answerOnPage, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { loadNode, useInstrument } from '../support/node-suite';
import { helper, nextMessage, runtimeSettings } from '../support/runtime';

type Msg = Record<string, unknown>;

const forged = { authorization: `Basic ${Buffer.from('qa-director:anything').toString('base64')}` };
const HASH = '$2a$08$notAHashThatIsCheckedHere.............................';

function intentOf(records: AuditRecord[], operation: string): AuditRecord & { phase: 'intent' } {
  const intent = records.find((r) => r.phase === 'intent' && r.what.operation === operation);
  assert.ok(intent && intent.phase === 'intent', `an intent of ${operation}: ${JSON.stringify(records)}`);
  return intent;
}

describe('audit: the http-in user is named only when httpNodeAuth checked it', function () {
  describe('an operation node fed by an http in node', function () {
    const sim = useInstrument();
    const audit = useAuditDir(runtimeSettings);

    it('without httpNodeAuth, a Basic header nobody checked names no user', async function () {
      const node = await loadNode(sim, { id: 'clear', type: 'lh-clear-errors' });
      await node.run({ payload: 1, req: { headers: forged } });
      await helper.unload();
      const who = intentOf(audit.records(), 'clear-errors').who;
      assert.equal(who.user, undefined, JSON.stringify(who));
      assert.equal(who.node, 'clear');
    });

    it('with httpNodeAuth, the Basic user Node-RED checked is named', async function () {
      runtimeSettings({ lhAudit: { dir: audit.dir(), key: 'node-test-key' }, httpNodeAuth: { user: 'operator', pass: HASH } });
      const node = await loadNode(sim, { id: 'clear', type: 'lh-clear-errors' });
      const checked = { authorization: `Basic ${Buffer.from('operator:pw').toString('base64')}` };
      await node.run({ payload: 1, req: { headers: checked } });
      await helper.unload();
      assert.equal(intentOf(audit.records(), 'clear-errors').who.user, 'operator');
    });
  });

  describe('the answer page', function () {
    this.timeout(20000);
    const { sim, pageNode } = usePageSuite();
    const audit = useAuditDir(runtimeSettings);

    it('without httpNodeAuth, the answer is recorded with the typed name, never a user from a forged header', async function () {
      const server = bServerFlow(sim, { withB: false });
      await loadWithPage(
        [...server.nodes, pageNode({ path: '/lh-answer', wires: [['out'], []] }), { id: 'out', type: 'helper' }],
        { ...server.credentials, page: { secret: 'forged-user-secret' } },
      );
      const error = sim.injectPendingError();
      const out = nextMessage(helper.getNode('out'));
      helper.getNode('page').receive({ payload: error as unknown as Msg, source: 'A', event: 'raised' });
      const link = String((await out).answerUrl);
      const answered = await answerOnPage(link, 'Retry', 'Dana', forged);
      assert.equal(answered.status, 200, answered.text);
      await helper.unload();
      const who = intentOf(audit.records(), 'answer-error').who;
      assert.equal(who.user, undefined, JSON.stringify(who));
      assert.equal(who.signer, 'Dana');
    });
  });
});
