/**
 * Review finding: a desired protocol nested 10,000 levels deep (a JSON file of nested arrays, a flow's bug) ended
 * Node-RED. lh-protocol refused it as it should (`... nests deeper than 32 levels`), but Node-RED copies the failed
 * msg for each Catch node with a recursive deep copy, which overflowed the stack; the exception was uncaught and
 * Node-RED exited ("[red] Uncaught Exception: RangeError: Maximum call stack size exceeded"). The same held for any
 * node's failure with such a msg (a plan in msg.plan, any property). A failing node now replaces each msg property
 * nested deeper than 256 levels by a text saying so before the error goes to Catch nodes.
 * In a real Node-RED process against the simulator: three such msgs (msg.payload of plan, msg.plan of apply, another
 * property), each error reaches the Catch node naming the field, Node-RED keeps running, nothing is written. Then a
 * property (seeded PRNG, the seed printed; LH_SEED=<n> replays it) of the depth check against a plain recursive one
 * over random trees with shared and cyclic parts.
 */
import assert from 'node:assert/strict';

import { nestsDeeper } from '../../src/nodes/shared/msg-depth';
import { Simulator } from '../../src/simulator';
import { Rng } from '../support/prng';
import { caughtToLog, credentialsFor, type FlowNode, Replica } from '../support/red-replicas';
import { until } from '../support/until';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

describe('review: a msg nested thousands of levels deep fails to Catch, Node-RED keeps running', function () {
  this.timeout(60_000);

  it('in a real Node-RED: plan, apply and another property, each error caught, nothing written', async function () {
    const sim = new Simulator({});
    await sim.start();
    const deep = (leaf: string, open: string, close: string): string =>
      `let d = ${leaf}; for (let i = 0; i < 10000; i++) d = ${open}d${close};`;
    const inject = (id: string, func: string): FlowNode[] => [
      { id: `inj-${id}`, type: 'inject', z: 'tab', once: true, onceDelay: 0.3, repeat: '', wires: [[`mk-${id}`]] },
      { id: `mk-${id}`, type: 'function', z: 'tab', outputs: 1, func: `${func} return msg;`, wires: [['proto']] },
    ];
    const flows = [
      { id: 'tab', type: 'tab', label: 't' },
      { id: 'server-a', type: 'lh-server', baseUrl: sim.baseUrl, instrumentUrl: '', timeout: 3000 },
      ...inject(
        'plan',
        `${deep('1', '{ a: ', ' }')} msg.operation = 'plan'; msg.payload = { steps: [{ name: 'A', stepType: 'LidStep', x: d }] };`,
      ),
      ...inject('apply', `${deep('1', '[', ']')} msg.operation = 'apply'; msg.plan = d;`),
      ...inject('other', `${deep('{}', '{ b: ', ' }')} msg.operation = 'nope'; msg.context = d;`),
      {
        id: 'proto',
        type: 'lh-protocol',
        z: 'tab',
        server: 'server-a',
        operation: 'msg',
        protocolId: '1',
        protocolIdType: 'num',
        wires: [[]],
      },
      ...caughtToLog(['proto']),
    ];
    const red = new Replica('deep-msg', flows, credentialsFor([{ id: 'a' }]));
    try {
      await red.start();
      await until(() => !red.running || (red.log.match(/CAUGHT/g) ?? []).length >= 3, 'three errors caught', 15_000);
      assert.ok(red.running, `Node-RED exited:\n${red.log.slice(-1500)}`);
      assert.match(red.log, /CAUGHT (LhError: )?payload\.steps\[0\] "A"\.x\.a\.a.* nests deeper than 32 levels/);
      assert.match(red.log, /CAUGHT (LhError: )?plan must be an object/);
      assert.match(red.log, /CAUGHT (LhError: )?operation must be one of export, plan, apply, validate/);
      assert.equal(sim.requests.filter((r) => r.method !== 'GET' && !r.path.includes('authenticate')).length, 0);
    } finally {
      await red.destroy();
      await sim.stop();
    }
  });

  it('the depth check agrees with a plain recursive one, on shared and cyclic values too', function () {
    console.log(`      msg-depth seed: ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    /** How deep a depth-first copy that copies each object once (where first met) goes: lodash's cloneDeep. */
    const depthOf = (v: unknown, seen: Set<unknown> = new Set()): number => {
      if (v === null || typeof v !== 'object' || seen.has(v)) return 0;
      seen.add(v);
      let deepest = 0;
      for (const item of Array.isArray(v) ? v : Object.values(v as object)) deepest = Math.max(deepest, depthOf(item, seen));
      return 1 + deepest;
    };
    for (let round = 0; round < 500; round++) {
      const made: object[] = [];
      const make = (left: number): unknown => {
        if (left <= 0 || rng.chance(0.15)) return rng.pick([1, 'x', null, true]);
        if (made.length > 0 && rng.chance(0.2)) return rng.pick(made); // shared (and, below, cyclic) parts
        const node: unknown[] | Record<string, unknown> = rng.chance(0.5) ? [] : {};
        made.push(node);
        for (let i = rng.int(1, 3); i > 0; i--) {
          const item = make(left - 1);
          if (Array.isArray(node)) node.push(item);
          else node[`k${i}`] = item;
        }
        return node;
      };
      const value = make(rng.int(0, 12));
      if (made.length > 0 && rng.chance(0.3)) (made[made.length - 1] as Record<string, unknown>).cycle = value;
      const depth = depthOf(value);
      const limit = rng.int(0, 14);
      assert.equal(nestsDeeper(value, limit), depth > limit, `depth ${depth}, limit ${limit}`);
    }
  });
});
