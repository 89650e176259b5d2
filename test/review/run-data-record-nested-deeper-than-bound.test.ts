/**
 * Review (runs: records). An instrument answer nested thousands of levels deep (a run record with a field nested
 * 3000 levels: 15 KB of JSON, far under the 32 MiB answer limit) passed the client: the answer's size was bounded,
 * its nesting was not. lh-run-data `get` then sent a msg Node-RED cannot carry: the clone of a msg wired to two
 * nodes (or a debug node's JSON) overflows the stack, and Catch heard only "Maximum call stack size exceeded",
 * naming nothing (deeper still, 12000 levels, the client said the instrument "answered with text that is not JSON"). DESIGN
 * 0.4: every input bounded, every failure a clear error. Now an answer nested deeper than the bound is refused as an
 * answer the client does not take, naming the bound, and nothing is sent.
 */
import assert from 'node:assert/strict';

import { builtNode, useInstrument } from '../support/node-suite';
import { helper, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

function nested(depth: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = { level: v };
  return v;
}

describe('review: lh-run-data get of a run record nested deeper than any answer is', function () {
  const sim = useInstrument({ simulator: { simulationSpeed: 1000 } });

  for (const depth of [300, 3000]) {
    it(`refuses a record nested ${depth} levels, naming the bound; nothing sent`, async function () {
      sim.runs.create({ protocolId: 1, simulate: true }, 'admin');
      await until(() => sim.runs.state === 'Loading', 'Loading');
      sim.runs.abort();
      await until(() => sim.runs.records.all.length > 0, 'a run record');
      const record = sim.runs.records.all[sim.runs.records.all.length - 1] as unknown as Msg;
      record.notes = nested(depth);

      const server = serverFlow(sim, { withB: false });
      const nodes = [
        { id: 'tab', type: 'tab' },
        ...server.nodes,
        { id: 'data', type: 'lh-run-data', z: 'tab', server: 'server', operation: 'get', wires: [['out1', 'out2']] },
        { id: 'catcher', type: 'catch', z: 'tab', scope: ['data'], wires: [['caught']] },
        { id: 'out1', type: 'helper', z: 'tab' },
        { id: 'out2', type: 'helper', z: 'tab' },
        { id: 'caught', type: 'helper', z: 'tab' },
      ];
      await helper.load([tlsConfigNode, builtNode('lh-server'), builtNode('lh-run-data')], nodes, server.credentials);
      const sent: Msg[] = [];
      const caught: Msg[] = [];
      helper.getNode('out1').on('input', (m: Msg) => sent.push(m));
      helper.getNode('out2').on('input', (m: Msg) => sent.push(m));
      helper.getNode('caught').on('input', (m: Msg) => caught.push(m));
      helper.getNode('data').receive({ runId: record.id });
      await until(() => caught.length > 0 || sent.length > 0, 'an answer or an error', 10000);
      await new Promise((r) => setTimeout(r, 200)); // anything else the node would send

      assert.equal(
        sent.length,
        0,
        `nothing sent; sent ${sent.length}, caught ${JSON.stringify(caught.map((c) => (c._error as Msg).message))}`,
      );
      assert.equal(caught.length, 1);
      const error = caught[0]._error as Msg;
      assert.match(String(error.message), /nested deeper than \d+ levels/);
      assert.doesNotMatch(String(error.message), /call stack|not JSON/);
      assert.equal(error.kind, 'response');
    });
  }
});
