import assert from 'node:assert/strict';

import { until } from '../../support/embedded-red';
import { E2e, exampleFlow } from './common';

export function dashboardSuite(ctx: E2e): void {
  describe('07 Operator dashboard', function () {
    it('deploys with the dashboard, serves its page, lists the run records and watches runs and errors', async function () {
      const { flow, credentials, node } = exampleFlow('07 ', ctx.sim);
      Object.assign(node('lh-ex07-start'), { onceDelay: '0.1' });
      await ctx.red.deploy(flow, credentials);
      const page = await ctx.red.request('GET', '/dashboard/operator');
      assert.equal(page.status, 200);
      assert.match(page.text, /<div id="app"/);
      const paths = (): string[] => ctx.sim.requests.map((r) => `${r.method} ${r.path}`);
      await until('the run records, the run status and the pending errors read', () =>
        ['GET /api/v1/run-data', 'GET /api/v1/protocol-run', 'GET /api/v1/errors/check-for-pending-errors'].every((p) =>
          paths().includes(p),
        ),
      );
    });
  });
}
