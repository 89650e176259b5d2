import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';

describe('coordination: lh-server pointed at a missing or broken lh-coordination', function () {
  const sim = useInstrument();

  /** An lh-clear-errors node behind that server: what it reaches Catch with, and what the instrument received. */
  async function attempt(
    extra: Record<string, unknown>[],
    coordination: string,
    credentials: Record<string, Record<string, string>> = {},
  ): Promise<string> {
    const server = serverFlow(sim, { withB: false, config: { coordination } });
    await loadFlow(
      [
        ...server.nodes,
        ...extra,
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      { ...server.credentials, ...credentials },
    );
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('clear').receive({ payload: 1 });
    const msg = await caught;
    return String((msg._error as { message: string }).message);
  }

  it('a coordination node that is not deployed: the server refuses to run uncoordinated, naming it; nothing is sent', async function () {
    const message = await attempt([], 'nowhere');
    assert.match(message, /lh-coordination node selected on the lh-server node is missing/);
    assert.equal(sim.requests.length, 0);
  });

  it('a coordination node with a password in its URL: refused naming the field, the password in no message', async function () {
    const message = await attempt(
      [{ id: 'coord', type: 'lh-coordination', url: 'redis://:hunter2hunter2@127.0.0.1:1' }],
      'coord',
    );
    assert.match(message, /lh-coordination url: no user name or password in the URL/);
    assert.doesNotMatch(message, /hunter2/);
    assert.equal(sim.requests.length, 0);
  });

  it('a coordination node with a query in its URL (?password=…, ignored): refused naming the field, not echoed', async function () {
    const message = await attempt(
      [{ id: 'coord', type: 'lh-coordination', url: 'redis://127.0.0.1:1/0?password=hunter2x' }],
      'coord',
    );
    assert.match(message, /lh-coordination url: no query or fragment in the URL/);
    assert.doesNotMatch(message, /hunter2x/);
    assert.equal(sim.requests.length, 0);
  });

  it('a coordination node whose URL path is not a database number (/abc): refused naming the field and the rule', async function () {
    const message = await attempt([{ id: 'coord', type: 'lh-coordination', url: 'redis://127.0.0.1:1/abc' }], 'coord');
    assert.match(message, /lh-coordination url: .*database number from 0 to 65535/);
    assert.equal(sim.requests.length, 0);
  });
});
