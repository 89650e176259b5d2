import assert from 'node:assert/strict';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { debugValue, E2e, exampleFlow } from './common';

export function protocolsSuite(ctx: E2e): void {
  describe('10 Protocols as code', function () {
    let dir: string;
    beforeEach(function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-e2e-protocol-'));
    });
    afterEach(function () {
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('exports protocol 1 to a file; an edited file is planned, the diff shown, applied once approved; a stale plan is refused', async function () {
      const { flow, credentials, node } = exampleFlow('10 ', ctx.sim);
      const file = path.join(dir, 'protocols', 'demo-protocol.json');
      node('lh-ex10-write').filename = file;
      node('lh-ex10-read').filename = file;
      await ctx.red.deploy(flow, credentials);

      const written = ctx.red.nextDebug('lh-ex10-written');
      await ctx.red.inject('lh-ex10-export');
      assert.equal(debugValue(await written), file);
      const text = fs.readFileSync(file, 'utf8');
      const exported = JSON.parse(text) as { name: string; steps: Record<string, unknown>[] };
      assert.equal(text, `${JSON.stringify(exported, null, 4)}\n`);
      assert.equal(exported.steps[0].name, 'Pause for plate check');

      // the engineer edits the file: a longer, renamed pause, and the incubation first
      const [pause, reagent, incubate] = exported.steps;
      const edited = {
        ...exported,
        steps: [incubate, { ...pause, name: 'Pause for a look', renamedFrom: pause.name, duration: 45 }, reagent],
      };
      fs.writeFileSync(file, JSON.stringify(edited, null, 4));
      const diff = ctx.red.nextDebug('lh-ex10-diff');
      await ctx.red.inject('lh-ex10-plan');
      const shown = debugValue(await diff) as string;
      assert.match(
        shown,
        /\(3 changes\):\nrename "Pause for plate check" → "Pause for a look"\nupdate "Pause for a look": duration\nmove "Incubate" to 1\n/,
      );
      assert.equal(
        ctx.sim.requests.filter((r) => r.method !== 'GET' && r.path.includes('/protocols/')).length,
        0,
        'nothing written before the approval',
      );

      const applied = ctx.red.nextDebug('lh-ex10-applied');
      await ctx.red.inject('lh-ex10-approve');
      const msg = debugValue(await applied) as { outcome: string };
      assert.equal(msg.outcome, 'applied');
      const steps = [...(ctx.sim.state.protocols.get(1)?.steps ?? [])].sort((a, b) => a.stepOrder - b.stepOrder);
      assert.deepEqual(
        steps.map((s) => s.name),
        ['Incubate', 'Pause for a look', 'Add buffer'],
      );

      // planned again, then edited on the touchscreen before the approval: refused, nothing written
      edited.steps[0] = { ...incubate, rpm: 900 };
      fs.writeFileSync(file, JSON.stringify(edited, null, 4));
      const diff2 = ctx.red.nextDebug('lh-ex10-diff');
      await ctx.red.inject('lh-ex10-plan');
      assert.match(debugValue(await diff2) as string, /update "Incubate": rpm/);
      steps[2].disabled = true;
      const writes = ctx.sim.requests.filter((r) => r.method !== 'GET').length;
      const why = ctx.red.nextDebug('lh-ex10-refused');
      await ctx.red.inject('lh-ex10-approve');
      const error = debugValue(await why) as { message: string };
      assert.match(error.message, /changed on the instrument since plan/);
      assert.equal(ctx.sim.requests.filter((r) => r.method !== 'GET').length, writes);
    });
  });
}
