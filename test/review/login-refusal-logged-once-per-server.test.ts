/**
 * Hostile review (first hour: a wrong password in the lh-server): the refusal was logged by every polling node of the
 * instrument, each its own copy of a 400-character line ([lh-run-watch:…] then [lh-error-poll:…] "login as "admin"
 * was rejected (401) …"), though it is one event of one lh-server, and the README promises one log line per
 * instrument for a connection problem, not one per node. The lh-server now says it once when its session is refused;
 * the nodes show it in their status ("login failed (rejected, 401)") and leave the log to it.
 */
import assert from 'node:assert/strict';

import { statusWhere } from '../nodes/lh-error-poll.support';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: a refused login is logged once, by its lh-server', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it('a wrong password, an error poll and a run watch: one warning, from the lh-server; both nodes show it', async function () {
    const server = serverFlow(sim, { withB: false, credentials: { username: 'admin', password: 'not-the-password-58' } });
    await helper.load(
      [tlsConfigNode, ...packageNodes()],
      [
        ...server.nodes,
        // other intervals: each is first in its own schedule, so both poll at once after the deploy
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'A',
          interval: 60,
          offlineAfter: 3,
          listen: false,
          snapshot: false,
          persist: false,
          version: 3,
          wires: [[], [], []],
        },
        { id: 'watch', type: 'lh-run-watch', server: 'server', interval: 61, listen: false, wires: [[], [], [], []] },
      ],
      server.credentials,
    );
    const refused = (s: Msg): boolean => s.fill === 'red' && s.text === 'login failed (rejected, 401)';
    await Promise.all([statusWhere('poll', refused), statusWhere('watch', refused)]);
    assert.equal(sim.state.failedLogins, 1, 'one login sent');
    const refusals = (helper.log() as unknown as { args: [Msg][] }).args
      .map(([entry]) => entry)
      .filter((entry) => entry.level === 30 && /login as "admin" was rejected \(401\)/.test(String(entry.msg)));
    assert.deepEqual(
      refusals.map((entry) => entry.type),
      ['lh-server'],
      JSON.stringify(refusals),
    );
    assert.match(String(refusals[0].msg), /check the user name and password in the lh-server node/);
  });
});
