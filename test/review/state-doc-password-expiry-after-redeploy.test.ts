/**
 * Review finding (the state stream after a redeploy): `passwordExpiresInDays` came only from the error watch's
 * password warning, which goes out at most once a day (a redeploy included, so that nobody is told twice). A state
 * node redeployed alone (its rate or topic changed), or added to the flows later, started from an empty document and
 * heard no warning for up to a day: its documents said `passwordExpiresInDays: null` while the password of the
 * lh-server's user was about to expire, and a wall screen or an alert on that field lost it. The state node now reads
 * the expiry its lh-server's session already knows from its last login (no request), at start and with each read of
 * the door.
 */
import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
type Doc = { passwordExpiresInDays: number | null };

describe('review: the password expiry in the state document after a redeploy of the state node', function () {
  this.timeout(60000);
  const sim = useInstrument({ simulator: { policy: { passwordExpires: 3, passwordExpiresNotification: 14 } } });

  function flow(rate: string): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = serverFlow(sim, { withB: false });
    return {
      nodes: [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [[], [], []] },
        { id: 'state', type: 'lh-state', server: 'server', rate, machineInterval: '5', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
      ],
      credentials: server.credentials,
    };
  }

  let docs: Doc[] = [];
  function record(): void {
    docs = [];
    helper.getNode('doc').on('input', (msg: Msg) => docs.push(msg.payload as Doc));
  }

  it('says the days left in every document after the redeploy', async function () {
    const first = flow('20');
    await helper.load([tlsConfigNode, ...packageNodes()], first.nodes, first.credentials);
    record();
    await until(() => docs.at(-1)?.passwordExpiresInDays === 3, 'a document with the expiry', 20_000);

    // the state node alone redeployed (its rate changed): the error watch and its session go on
    const second = flow('10');
    await helper.setFlows(second.nodes as never, 'nodes', second.credentials as never);
    record();
    await until(() => docs.length >= 2, 'the first document and the one 2 s after the deploy', 20_000);
    assert.deepEqual(
      docs.map((d) => d.passwordExpiresInDays),
      docs.map(() => 3),
      'the password still expires in 3 days',
    );
  });
});
