/**
 * Review finding: a desired protocol built in a function node was refused by plan whenever a step had a nested object
 * (`payload.steps[0] "A".destinations[0] must be a JSON value (text, number, boolean, null, array or object) (got a
 * object)`): the check took an object for JSON data only when its prototype was this realm's Object.prototype, but a
 * function node's code runs in a sandbox (another realm) whose `{}` has an Object.prototype of its own. Building or
 * editing a protocol in a function node is the ordinary way to do it in Node-RED. Now an object from any realm is
 * JSON data when its prototype is an Object.prototype (or null).
 * Property (fast-check, the seed printed; LH_SEED=<n> replays it): every generated desired protocol, made in another
 * realm (node:vm, as the function node does), is read as the same protocol is read from this realm. Then in a real
 * Node-RED process against the simulator: a function node builds a step with destinations, plan and apply it.
 */
import assert from 'node:assert/strict';
import vm from 'node:vm';

import fc from 'fast-check';

import { readDesired } from '../../src/nodes/lh-protocol/export-format';
import { Simulator } from '../../src/simulator';
import { caughtToLog, credentialsFor, type FlowNode, Replica } from '../support/red-replicas';
import { until } from '../support/until';
import { currentAndDesired } from '../unit/protocol-arbitraries';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

describe('review: a desired protocol built in a function node (another realm)', function () {
  this.timeout(60_000);

  it('is read as the same protocol from this realm', function () {
    console.log(`      protocol-realm seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    fc.assert(
      fc.property(currentAndDesired(1, 12), ({ desired }) => {
        const text = JSON.stringify({ steps: desired });
        const foreign: unknown = vm.runInNewContext(`(${text})`);
        assert.notEqual(Object.getPrototypeOf(foreign), Object.prototype, 'made in another realm');
        assert.equal(JSON.stringify(readDesired(foreign, 'plan')), JSON.stringify(readDesired(JSON.parse(text), 'plan')));
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('in a real Node-RED: a function node builds it, plan and apply take it', async function () {
    const sim = new Simulator({});
    await sim.start();
    const build =
      "msg.operation = 'plan'; msg.payload = { steps: [{ name: 'Add buffer', stepType: 'AddReagentStep', " +
      "destinations: [{ labware: 'Plate1', wells: 'A1:H12' }], liquidLabwareGroupId: 2, multiDispense: false }] }; return msg;";
    const flows: FlowNode[] = [
      { id: 'tab', type: 'tab', label: 't' },
      { id: 'server-a', type: 'lh-server', baseUrl: sim.baseUrl, instrumentUrl: '', timeout: 3000 },
      { id: 'inj', type: 'inject', z: 'tab', once: true, onceDelay: 0.3, repeat: '', wires: [['mk']] },
      { id: 'mk', type: 'function', z: 'tab', outputs: 1, func: build, wires: [['proto']] },
      {
        id: 'proto',
        type: 'lh-protocol',
        z: 'tab',
        server: 'server-a',
        operation: 'msg',
        protocolId: '1',
        protocolIdType: 'num',
        wires: [['next']],
      },
      {
        id: 'next',
        type: 'function',
        z: 'tab',
        outputs: 1,
        func: "if (msg.operation === 'plan') { node.warn('PLANNED ' + msg.plan.summary.join('; ')); msg.operation = 'apply'; return msg; } node.warn('OUTCOME ' + msg.outcome); return null;",
        wires: [['proto']],
      },
      ...caughtToLog(['proto']),
    ];
    const red = new Replica('realm', flows, credentialsFor([{ id: 'a' }]));
    try {
      await red.start();
      await until(() => /OUTCOME|CAUGHT/.test(red.log), 'the apply ended', 15_000);
      assert.doesNotMatch(red.log, /CAUGHT/);
      assert.match(
        red.log,
        /PLANNED delete "Pause for plate check"; delete "Incubate"; update "Add buffer": liquidLabwareGroupId/,
      );
      assert.match(red.log, /OUTCOME applied/);
      const writes = sim.requests.filter((r) => r.method !== 'GET' && r.path.startsWith('/api/v1/protocols/1/'));
      assert.deepEqual(
        writes.map((r) => r.method),
        ['DELETE', 'DELETE', 'PUT'],
      );
    } finally {
      await red.destroy();
      await sim.stop();
    }
  });
});
