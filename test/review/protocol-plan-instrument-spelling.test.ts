/**
 * Review finding: apply compared `plan.instrument` with the lh-server's URL as text. A plan made through an lh-server
 * that spells the instrument's URL otherwise (another Node-RED's config node, a plan file from a colleague:
 * `http://LOCALHOST:5000/`, `http://localhost:5000` for `http://127.0.0.1:5000`) was refused, nothing written, as "made
 * for another instrument than this node's", though every other part of the package takes those spellings as one
 * instrument (its home, the applies that wait for each other, the protocol's lock in Redis are keyed so). Now the two
 * URLs are compared as the homes key them; a plan of another instrument (another port, another host) is still refused.
 * In a real Node-RED against the simulator.
 */
import assert from 'node:assert/strict';

import { configuredNode, type LoadedNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: a plan made for this instrument, its URL spelled otherwise', function () {
  const sim = useInstrument();
  const { load } = configuredNode(sim, { id: 'protocol', type: 'lh-protocol' }, { only: ['lh-server', 'lh-protocol'] });
  const writes = (): number =>
    sim.requests.filter((r) => r.api === 'A' && r.method !== 'GET' && !r.path.startsWith('/api/v1/authenticate')).length;

  /** The msg out of the node, or the error its Catch node got (failing the test at once, not by a timeout). */
  async function outcome(node: LoadedNode, msg: Msg): Promise<Msg> {
    let onCaught: (m: Msg) => void = () => undefined;
    const caught = new Promise<never>((_, reject) => {
      onCaught = (m) => reject(new Error(String((m._error as Msg).message)));
    });
    node.caught.on('input', onCaught);
    try {
      return await Promise.race([node.run(msg), caught]);
    } finally {
      node.caught.removeListener('input', onCaught);
    }
  }

  it('applies it, whatever the host case, a trailing slash or the loopback alias; another instrument is refused', async function () {
    const node = await load({ operation: 'msg', protocolId: '' });
    const url = new URL(sim.baseUrl);
    const alias = url.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
    const spellings = [
      `${url.protocol}//${url.hostname.toUpperCase()}:${url.port}/`,
      `${url.protocol}//${alias}:${url.port}`,
      `${url.protocol.toUpperCase()}//${alias.toUpperCase()}:${url.port}//`,
    ];
    const planFor = async (name: string): Promise<Msg> => {
      const exported = (await node.run({ operation: 'export', protocolId: 1 })).payload as { steps: Msg[] };
      const desired = { steps: [...exported.steps, { name, stepType: 'LidStep', disabled: false }] };
      return (await node.run({ operation: 'plan', protocolId: 1, payload: desired })).plan as Msg;
    };
    for (const [i, instrument] of spellings.entries()) {
      const plan = { ...(await planFor(`Lid ${i}`)), instrument };
      const applied = await outcome(node, { operation: 'apply', plan: JSON.parse(JSON.stringify(plan)) });
      assert.equal(applied.outcome, 'applied', instrument);
    }
    const before = writes();
    const other = { ...(await planFor('Lid other')), instrument: `${url.protocol}//${url.hostname}:${Number(url.port) + 1}` };
    const refused = (await node.runFailing({ operation: 'apply', plan: other }))._error as Msg;
    assert.match(refused.message as string, /plan\.instrument .* made for another instrument/);
    assert.equal(writes(), before, 'nothing was written for another instrument');
  });
});
