import assert from 'node:assert/strict';

import { debugValue, E2e, exampleFlow } from './common';

export function dailySuite(ctx: E2e): void {
  describe('05 Daily check of settings and service routines', function () {
    it('reports settings, due routines and unanswered errors without clearing them; clearing is a separate, explicit button', async function () {
      const { flow, credentials } = exampleFlow('05 ', ctx.sim);
      await ctx.red.deploy(flow, credentials);
      (ctx.sim.state.softwareSettings as { generateRunReport: boolean }).generateRunReport = false;
      ctx.sim.injectPendingError({ title: 'Door open', severity: 'Warning' });
      ctx.sim.injectPendingError({ title: 'Clot detected' });

      const report = ctx.red.nextDebug('lh-ex05-repdbg');
      const fixed = ctx.red.nextDebug('lh-ex05-setdbg');
      await ctx.red.inject('lh-ex05-daily');
      const text = String(debugValue(await report));
      assert.match(text, /Run report: OFF \(switched on\)/);
      assert.match(text, /Recommended service routines: 2, not run in the last 24 h: Daily maintenance, Channel leak check/);
      assert.match(text, /Unanswered runtime errors among the latest: 2 \(not cleared/);
      assert.equal(ctx.sim.state.pendingErrors.length, 2, 'the daily check cleared pending errors');
      assert.equal(ctx.sim.requests.filter((r) => r.path.endsWith('/errors/clear-errors')).length, 0);
      assert.equal((debugValue(await fixed) as { generateRunReport: boolean }).generateRunReport, true);
      assert.equal(ctx.sim.state.softwareSettings.generateRunReport, true);

      const cleared = ctx.red.nextDebug('lh-ex05-cleardbg');
      await ctx.red.inject('lh-ex05-clearnow');
      assert.deepEqual(debugValue(await cleared), { numberOfErrorsCleared: 2, numberOfErrorsNotCleared: 0 });
      assert.equal(ctx.sim.state.pendingErrors.length, 0);

      const marked = ctx.red.nextDebug('lh-ex05-markdbg');
      await ctx.red.inject('lh-ex05-done');
      const routine = debugValue(await marked) as { id: number; lastRun: string };
      assert.equal(routine.id, 1);
      assert.ok(Date.now() - Date.parse(routine.lastRun) < 60_000, routine.lastRun);
      assert.equal(ctx.sim.state.serviceRoutines.find((r) => r.id === 1)?.lastRun, routine.lastRun);
    });
  });
}
