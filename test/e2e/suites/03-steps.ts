import assert from 'node:assert/strict';

import { until } from '../../support/embedded-red';
import { debugValue, E2e, exampleFlow } from './common';

export function stepsSuite(ctx: E2e): void {
  describe('03 Build a protocol from steps', function () {
    it('builds protocol 2: three steps created, reordered, one renamed, one disabled, listed; start over deletes them', async function () {
      const { flow, credentials } = exampleFlow('03 ', ctx.sim);
      await ctx.red.deploy(flow, credentials);
      assert.equal(ctx.sim.state.protocols.get(2)?.steps.length, 0, 'protocol 2 starts empty');

      const listed = ctx.red.nextDebug('lh-ex03-dbg');
      await ctx.red.inject('lh-ex03-build');
      const list = debugValue(await listed) as {
        id: number;
        name: string;
        stepType: string;
        stepOrder: number;
        disabled: boolean;
      }[];

      const steps = [...(ctx.sim.state.protocols.get(2)?.steps ?? [])].sort((a, b) => a.stepOrder - b.stepOrder);
      assert.deepEqual(
        steps.map((s) => [s.stepOrder, s.stepType, s.name, s.disabled]),
        [
          [1, 'PauseStep', 'Plate check', true],
          [2, 'AddReagentStep', 'Add buffer', false],
          [3, 'HeatShakeStep', 'Incubate 10 min at 37 \u00b0C', false],
        ],
      );
      assert.equal((steps[2] as { temperature?: number }).temperature, 37, 'the step body reached the instrument');
      assert.deepEqual(
        list.map((s) => [s.id, s.name, s.disabled]),
        steps.map((s) => [s.id, s.name, s.disabled]),
        "the list the flow shows is the instrument's",
      );
      assert.equal(ctx.sim.requests.filter((r) => r.method === 'POST' && /\/protocols\/2\/step$/.test(r.path)).length, 3);

      const deleted = ctx.red.collectDebug('lh-ex03-deldbg');
      await ctx.red.inject('lh-ex03-reset');
      await until('three deletions', () => deleted.length === 3);
      assert.equal(ctx.sim.state.protocols.get(2)?.steps.length, 0);
      assert.equal(ctx.sim.state.protocols.get(1)?.steps.length, 3, 'the other protocol is untouched');
    });
  });
}
