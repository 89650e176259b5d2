/**
 * review34's left item: two lh-server nodes of one instrument whose URL is spelled two ways (`http://127.0.0.1:port`
 * and `HTTP://localhost:port/`) share one home, one session and one coordination identity, but the lab events named
 * the instrument by the lh-server's key as written: an lh-state node on one spelling never heard the error watch on
 * the other and said "0 pending" while an error waited.
 */
import assert from 'node:assert/strict';

import { messageWhere } from '../nodes/lh-error-poll.support';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;
type Doc = { errors: { pending: number; list: Msg[] } };

/** The same instrument's A URL as another person types it: scheme and host in capitals, localhost, a trailing slash. */
function otherSpelling(baseUrl: string): string {
  const u = new URL(baseUrl);
  return `HTTP://LOCALHOST:${u.port}${u.pathname.replace(/\/+$/, '')}/`;
}

describe('review: lh-state on an lh-server whose URL is spelled otherwise than the error watch’s', function () {
  this.timeout(30000);
  const sim = useInstrument();

  for (const where of ['watch on the first spelling, state on the second', 'watch on the second, state on the first']) {
    it(`the document lists the error the watch raised (${where})`, async function () {
      const first = serverFlow(sim, { withB: false });
      const second = serverFlow(sim, { id: 'server2', withB: false, config: { baseUrl: otherSpelling(sim.baseUrl) } });
      const [watchServer, stateServer] = where.startsWith('watch on the first') ? ['server', 'server2'] : ['server2', 'server'];
      const flow: Msg[] = [
        ...first.nodes,
        ...second.nodes,
        { id: 'poll', type: 'lh-error-poll', server: watchServer, source: 'A', interval: 0.3, wires: [[], [], []] },
        { id: 'state', type: 'lh-state', server: stateServer, rate: '20', machineInterval: '0', wires: [['doc'], []] },
        { id: 'doc', type: 'helper' },
      ];
      await helper.load([...packageNodes(), tlsConfigNode], flow, { ...first.credentials, ...second.credentials });
      const listed = messageWhere('doc', (m) => (m.payload as Doc).errors.pending === 1);
      const error = sim.injectPendingError({ severity: 'Error', title: 'Clot detected' });
      const doc = (await listed).payload as Doc;
      assert.equal(doc.errors.list[0]?.id, error.id);
    });
  }
});
