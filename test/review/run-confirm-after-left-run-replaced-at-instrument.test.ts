/**
 * Review (runs and live events). A start with Stop at loading leaves its run at Loading; an operator aborts that run at
 * the instrument's screen and prepares another run of the same protocol there. The memory of the run left at Loading
 * was forgotten only by a later confirm or create, so msg.confirmLoading sent load-complete for the operator's run,
 * although this Node-RED had seen (a status read) its own run leave Loading. README: "The confirm is refused ... for a
 * run at Loading that no start of this Node-RED left there — one an operator prepared at the instrument".
 */
import assert from 'node:assert/strict';

import { useRunNode } from '../nodes/lh-run.support';
import { collect } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('lh-run: confirm after the run left at Loading was replaced at the instrument', function () {
  const { sim, load } = useRunNode();
  const loadCompletes = (): number => sim.requests.filter((r) => r.path === '/api/v1/protocol-run/load-complete').length;

  it('refuses the confirm once a status read saw the run left at Loading gone, and sends nothing', async function () {
    const node = await load({ operation: 'msg', stopAtLoading: true });
    const left = await node.run({ operation: 'start', protocolId: 1, simulate: true });
    assert.equal(left.outcome, 'loading');

    // the operator aborts it at the instrument; this Node-RED reads the status (a dashboard, a run watch)
    sim.runs.abort();
    await until(() => sim.runs.state === 'Idle', 'Idle', 10000);
    assert.equal((await node.run({ operation: 'status' })).state, 'Idle');

    // then prepares a run of the same protocol at the instrument: it waits at Loading
    sim.runs.create({ protocolId: 1, simulate: true }, 'operator');
    await until(() => sim.runs.state === 'Loading', 'Loading', 10000);

    const outputs = collect(node.out);
    const caught = collect(node.caught);
    node.node.receive({ operation: 'start', confirmLoading: true });
    await until(() => outputs.length + caught.length > 0, 'the confirm answered', 10000);
    assert.equal(
      loadCompletes(),
      0,
      `no load-complete for the run the operator prepared (outcome ${String(outputs[0]?.outcome)})`,
    );
    const refused = caught[0]._error as Msg;
    assert.equal(refused.field, 'confirmLoading');
    assert.match(String(refused.message), /not left there by a start of this Node-RED/);
    assert.equal(refused.kind, 'validation');
    assert.equal(sim.runs.state, 'Loading');
  });

  it('still confirms its own run after status reads that saw it at Loading', async function () {
    const node = await load({ operation: 'msg', stopAtLoading: true });
    const left = await node.run({ operation: 'start', protocolId: 1, simulate: true });
    assert.equal(left.outcome, 'loading');
    for (let i = 0; i < 3; i++) assert.equal((await node.run({ operation: 'status' })).state, 'Loading');
    const started: Msg = await node.run({ operation: 'start', confirmLoading: true });
    assert.equal(started.outcome, 'started');
    assert.equal(loadCompletes(), 1);
  });
});
