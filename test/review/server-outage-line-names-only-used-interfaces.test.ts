/**
 * Review finding (fix86, item 4): the lh-server's one outage line ("instrument unreachable (A and B: …)") named B for
 * an lh-server without an instrument URL: a login that got no answer counted for B too whenever B would go through
 * the session (no instrument token), whether or not the node had a B at all. Now the session's interfaces, and the
 * line, are only those the lh-server uses: "(A: …)" without B, "(A and B: …)" with a B that logs in through A.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: the outage line names only the interfaces the lh-server uses', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  for (const withB of [false, true])
    it(`every login reset, an lh-server ${withB ? 'with B (through the session)' : 'without B'}: the line says ${withB ? 'A and B' : 'A only'}`, async function () {
      sim.setFaults({ resetRate: 1, methods: ['POST'] });
      const server = serverFlow(sim, { withB });
      await loadFlow(
        [
          ...server.nodes,
          {
            id: 'poll',
            type: 'lh-error-poll',
            server: 'server',
            source: 'A',
            interval: 0.3,
            offlineAfter: 2,
            listen: false,
            snapshot: false,
            persist: false,
            version: 3,
            wires: [[], [], []],
          },
        ],
        server.credentials,
      );
      const warnings = (): string[] =>
        (helper.log() as unknown as { args: [Msg][] }).args
          .map(([entry]) => entry)
          .filter((entry) => entry.level === 30 && entry.type === 'lh-server')
          .map((entry) => String(entry.msg));
      await until(() => warnings().some((w) => /instrument unreachable/.test(w)), 'the lh-server saying the outage', 20_000);
      const line = warnings().find((w) => /instrument unreachable/.test(w)) ?? '';
      if (withB) assert.match(line, /instrument unreachable \(A and B: /, line);
      else assert.match(line, /instrument unreachable \(A: /, line);
    });
});
