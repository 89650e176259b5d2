/**
 * review52: a pause, resume or abort resent after a lost reply and refused with 409 is read back (review46): it
 * succeeds when the run status shows the action done. When that read failed too (the instrument unreachable a moment
 * longer), the node reported the read's failure ("run-status: cannot reach …") instead of the instrument's refusal:
 * the 409 and its reason, which say what the instrument did with the action, were lost, and a flow that acts on the
 * refusal (statusCode 409) saw a network error. The 409 stands now when the read back fails.
 *
 * In a real Node-RED through a proxy that loses the action's first reply after the simulator applied it, then drops
 * every status read: each action, in a state where its resend is refused.
 */
import assert from 'node:assert/strict';

import type { Simulator } from '../../src/simulator';
import { type ProxyDecision } from '../reliability/lossy-proxy';
import { helper } from '../support/runtime';
import { until } from '../support/until';
import { useRunBehindLossyProxy } from './run-control-proxy.support';

type Msg = Record<string, unknown>;

async function running(sim: Simulator): Promise<void> {
  sim.runs.create({ protocolId: 1 }, 'lab');
  await until(() => sim.runs.state === 'Loading', 'the run at Loading', 10000);
  sim.runs.loadComplete({ protocolId: 1, loadCompleteAction: 'Run' });
  await until(() => sim.runs.state === 'Running', 'the run Running', 10000);
}

describe('review: a resent run control whose read back fails keeps the instrument refusal', function () {
  this.timeout(60000);
  const run = useRunBehindLossyProxy(1);
  const { sim } = run;

  for (const action of ['pause', 'abort'] as const) {
    it(`${action}: the 409 reaches Catch, not the failed read`, async function () {
      sim.reset();
      await running(sim);
      let first = true;
      let acted = false;
      run.proxy.decide = (r): ProxyDecision => {
        if (r.method === 'PUT' && r.path.endsWith(`/protocol-run/${action}`)) {
          if (!first) return 'forward';
          first = false;
          acted = true;
          return 'lose-after';
        }
        return acted && r.method === 'GET' && r.path.endsWith('/protocol-run') ? 'drop-before' : 'forward';
      };
      const caught: Msg[] = [];
      const outputs: Msg[] = [];
      helper.getNode('caught').on('input', (m: Msg) => caught.push(m));
      helper.getNode('out').on('input', (m: Msg) => outputs.push(m));
      run.node.node.receive({ operation: action });
      await until(() => caught.length + outputs.length > 0, `${action} settled`, 40000);
      assert.equal(outputs.length, 0);
      const error = caught[0]._error as Msg;
      assert.equal(error.statusCode, 409, String(error.message));
      assert.match(String(error.message), new RegExp(action, 'i'));
    });
  }
});
