import assert from 'node:assert/strict';

import { debugValue, E2e, exampleFlow, USER } from './common';

type Msg = Record<string, unknown>;

export function auditSuite(ctx: E2e): void {
  describe('09 Audit trail', function () {
    it('clear pending errors: the count in "cleared", its intent then its outcome in "audit records"', async function () {
      const { flow, credentials } = exampleFlow('09 ', ctx.sim);
      ctx.sim.injectPendingError({ title: 'Clot detected' });
      await ctx.red.deploy(flow, credentials);
      const records = ctx.red.collectDebug('lh-ex09-records');
      const cleared = ctx.red.nextDebug('lh-ex09-cleared');
      const outcome = ctx.red.nextDebug('lh-ex09-records', (m) => (debugValue(m) as Msg).topic === 'outcome/clear-errors');
      await ctx.red.inject('lh-ex09-inject');
      assert.equal((debugValue(await cleared) as Msg).numberOfErrorsCleared, 1);
      await outcome;
      const msgs = records.map((m) => debugValue(m) as Msg);
      const topics = msgs.map((m) => m.topic).filter((t) => t !== 'file/opened');
      assert.deepEqual(topics, ['intent/clear-errors', 'outcome/clear-errors'], JSON.stringify(topics));
      const [intent, done] = msgs.filter((m) => m.topic !== 'file/opened').map((m) => m.payload as Msg);
      assert.equal(intent.id, done.id, 'the outcome of that intent');
      assert.equal((done.outcome as Msg).result, 'applied');
      assert.ok(!JSON.stringify(msgs).includes(USER.password), 'no password in the records');
    });
  });
}
