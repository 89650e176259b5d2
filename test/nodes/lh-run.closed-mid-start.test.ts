/**
 * Issue 17 point 2 (review 2). Review finding: closing an lh-run node (a redeploy of that node, or deleting it) while its start waits for the
 * create answer does not stop the start: only Sleeper.sleep() looks at the close. When the first status read after
 * create already shows Loading, the closed node goes on and sends load-complete, which starts the run on the
 * hardware, for a flow that no longer exists.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

describe('lh-run: a node closed mid-start sends nothing more (issue 17 point 2, review 2)', function () {
  const sim = useInstrument({ simulator: { simulationSpeed: 1000 } });
  const { load } = configuredNode(
    sim,
    { id: 'run', type: 'lh-run', pollInterval: '0.05', timeout: '20' },
    { only: ['lh-server', 'lh-run'], server: { timeout: 10000 } },
  );

  it('sends nothing that moves hardware after it was closed', async function () {
    const loaded = await load({ operation: 'start', protocolId: '1', simulate: 'true' });
    sim.setFaults({ latencyMs: 600 });
    loaded.node.receive({});
    await until(() => sim.requests.some((r) => r.path === '/api/v1/protocol-run/create'), 'create sent', 20000);
    // the user deploys a change to this node (or deletes it) while create is in flight
    await (helper.getNode('run') as unknown as { close(removed: boolean): Promise<void> }).close(true);
    const closedAt = sim.requests.length;
    await new Promise((r) => setTimeout(r, 5000));
    sim.clearFaults();
    const after = sim.requests.slice(closedAt).map((r) => `${r.method} ${r.path}`);
    assert.ok(
      !after.includes('PUT /api/v1/protocol-run/load-complete'),
      `requests after the node was closed: ${after.join(', ')}`,
    );
  });
});
