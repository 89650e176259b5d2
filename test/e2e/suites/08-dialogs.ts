import assert from 'node:assert/strict';

import { until } from '../../support/embedded-red';
import { debugValue, E2e, exampleFlow } from './common';

export function dialogsSuite(ctx: E2e): void {
  describe('08 Answer instrument dialogs', function () {
    it('a dialog raised on the simulator arrives on the event socket and the rule answers it Ok with close-view', async function () {
      const { flow, credentials } = exampleFlow('08 ', ctx.sim);
      const tab = flow.find((n) => n.type === 'tab') as unknown as { env: { name: string; type: string; value: string }[] };
      tab.env = tab.env.map((e) => (e.name === 'SIM_URL' ? { ...e, type: 'str', value: ctx.sim.controlUrl } : e));
      const connected = ctx.red.nextDebug('lh-ex08-conn', (m) => (debugValue(m) as { state?: string }).state === 'connected');
      await ctx.red.deploy(flow, credentials);
      await connected;

      const answered = ctx.red.nextDebug('lh-ex08-answered');
      const raised = ctx.red.nextDebug('lh-ex08-raised');
      await ctx.red.inject('lh-ex08-raise');
      const box = debugValue(await raised) as { viewId: string };
      assert.deepEqual(debugValue(await answered), { viewId: box.viewId, viewResult: 'Ok', viewInput: '' });
      await until('the dialog closed on the simulator', () => ctx.sim.views.closed.length === 1);
      assert.deepEqual(
        ctx.sim.views.closed.map((c) => [c.viewId, c.viewResult]),
        [[box.viewId, 'Ok']],
      );
      assert.equal(ctx.sim.views.open.length, 0);
    });
  });
}
