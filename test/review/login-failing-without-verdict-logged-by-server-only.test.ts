/**
 * Review finding (review68): while the instrument answered its logins with a 5xx, review62's spacing made each node's
 * next request fail at once with "login as … not sent: the last N logins failed … the next goes with a request in
 * X s". The text changes with each poll (the count, the countdown), and lh-error-poll and lh-run-watch log a failure
 * each time its text changes: every node of the instrument logged a line per poll for the whole outage (3 nodes, 40 s
 * of 503s: 27 warnings; lh-run-watch's refused back-off does not grow, so it said it every 4 intervals), though the
 * README promises one warning per instrument, from its lh-server, not a line per node and poll.
 *
 * Now a login that failed without a verdict, or was not sent for such failures, is the lh-server's to say (its
 * connection state logs the outage once); the nodes show it in their status.
 */
import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: logins failing without a verdict are logged by the lh-server, not by each node and poll', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it('503 to every login for 6 s: no node logs the login failures; the lh-server says the outage', async function () {
    sim.setFaults({ statusRate: 1, statusCode: 503, methods: ['POST'] }); // logins fail, reads would be answered
    const server = serverFlow(sim, { withB: false });
    const poll = (id: string, interval: number): Msg => ({
      id,
      type: 'lh-error-poll',
      server: 'server',
      source: 'A',
      interval,
      offlineAfter: 3,
      listen: false,
      snapshot: false,
      persist: false,
      version: 3,
      wires: [[], [], []],
    });
    await helper.load(
      [tlsConfigNode, ...packageNodes()],
      [
        ...server.nodes,
        poll('p1', 0.5),
        poll('p2', 0.7),
        { id: 'watch', type: 'lh-run-watch', server: 'server', interval: 0.6, listen: false, wires: [[], [], [], []] },
      ],
      server.credentials,
    );
    const logins = (): number => sim.requests.filter((r) => r.path === '/api/v1/authenticate').length;
    await until(() => logins() >= 3, 'three logins answered 503 (spaced 1 s, 2 s)', 15_000);
    // every node shows it: the instrument failing (fix75: a 5xx at login is the server kind, yellow below the offline
    // threshold as a reset is, then red offline), not a refused login
    const failed = (s: Msg): boolean =>
      (s.fill === 'yellow' || s.fill === 'red') && /^instrument error \(login 503, not resent\)$/.test(String(s.text));
    for (const id of ['p1', 'p2', 'watch']) {
      const shown = (helper.getNode(id) as unknown as { status: { args: [Msg][] } }).status.args.map(([s]) => s);
      assert.ok(shown.some(failed), `${id} shows it: ${JSON.stringify(shown)}`);
    }
    const warnings = (): Msg[] =>
      (helper.log() as unknown as { args: [Msg][] }).args.map(([entry]) => entry).filter((entry) => entry.level === 30);
    // the third failed login makes the instrument offline (Offline after 3) once its 503 is back at the client: the
    // simulator counted the request before it answered, so the lh-server's line may come a moment after
    await until(
      () => warnings().some((w) => w.type === 'lh-server' && /503/.test(String(w.msg))),
      'the lh-server saying the outage (a warning naming the 503)',
      10_000,
    );
    const byNodes = warnings().filter((w) => w.type !== 'lh-server' && /login as "admin"/.test(String(w.msg)));
    assert.deepEqual(
      byNodes.map((w) => `${String(w.type)}: ${String(w.msg).slice(0, 80)}`),
      [],
      'the nodes leave the login failures to the lh-server',
    );
  });
});
