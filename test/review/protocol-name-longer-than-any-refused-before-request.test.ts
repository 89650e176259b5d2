/**
 * Review finding (review66): msg.protocolName had no bound. lh-run and lh-protocol took a name of any length (a
 * file read into the msg, a flow's bug), logged in and read the instrument's list of protocols for it, and then
 * refused it with a message that echoed all of it (200,000 characters into the log and at Catch). A name is now at
 * most 1000 characters, refused naming protocolName and the rule before anything is sent; one of 1000 is looked up.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

/** The bound (MAX_PROTOCOL_NAME_LENGTH of src/client/protocols.ts), as the README and the help say it. */
const MAX_PROTOCOL_NAME_LENGTH = 1000;

describe('review: a protocol name longer than any is refused before a request', function () {
  const sim = useInstrument();
  const only = ['lh-server', 'lh-run', 'lh-protocol'];
  const nodes = {
    'lh-run validate': configuredNode(sim, { id: 'run', type: 'lh-run', operation: 'validate' }, { only }),
    'lh-run start': configuredNode(sim, { id: 'run', type: 'lh-run', operation: 'start' }, { only }),
    'lh-protocol export': configuredNode(sim, { id: 'protocol', type: 'lh-protocol', operation: 'export' }, { only }),
  };

  for (const [what, node] of Object.entries(nodes)) {
    it(`${what}: a name of ${MAX_PROTOCOL_NAME_LENGTH + 1} characters or more is refused, nothing sent`, async function () {
      const loaded = await node.load({});
      for (const length of [MAX_PROTOCOL_NAME_LENGTH + 1, 200_000]) {
        const before = sim.requests.length;
        const details = await loaded.expectFailure(
          { protocolName: `Demo protocol${'\n'.repeat(2)}${'x'.repeat(length - 15)}` },
          'protocolName',
          new RegExp(`^protocolName must be at most ${MAX_PROTOCOL_NAME_LENGTH} characters \\(got "Demo protocol\\\\n\\\\n`),
        );
        assert.ok(String(details.message).length < 200);
        assert.equal(sim.requests.length, before, `${length}: a request was made`);
      }
    });
  }

  it(`a name of ${MAX_PROTOCOL_NAME_LENGTH} characters is looked up at the instrument`, async function () {
    const loaded = await nodes['lh-run validate'].load({});
    await loaded.expectFailure(
      { protocolName: 'y'.repeat(MAX_PROTOCOL_NAME_LENGTH) },
      'protocolName',
      /^protocolName "y+…y+" is not a protocol of the instrument; it has "Demo protocol"/, // cut in the middle
    );
    assert.ok(sim.requests.some((r) => r.path === '/api/v1/protocols/names'));
  });
});
