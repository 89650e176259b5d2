/**
 * Review finding (fix75): while logins failed without a verdict (a 5xx, a reset), the requests held back by the
 * spacing counted towards offline with the error they failed with, "login as "admin" not sent: the last 2 logins
 * failed … the next goes with a request in 3.9 s". That text became the outage's reason: the lh-server's one warning
 * ("instrument unreachable (A: …)") and the offline msg of each error poll quoted a countdown that was stale from the
 * moment it was said, instead of what failed. Now a held-back login is counted with the failure it waits out: the
 * line and the msg say the cause (the 503, the reset), and no countdown.
 *
 * Drawn over the failure (500/502/503/504, a reset); seed printed, LH_SEED / LH_CASES replay and extend.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 1;
const FAILURES = ['500', '502', '503', '504', 'reset'] as const;

describe('review: the outage line and offline msg say the cause, not the held-back countdown', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  before(() => console.log(`      seed ${SEED} (LH_SEED=${SEED} to replay), ${CASES} cases`));

  const rng = new Rng(SEED);
  for (let c = 0; c < CASES; c++) {
    const failure = FAILURES[rng.below(FAILURES.length)];
    it(`case ${c}: every login ${failure === 'reset' ? 'reset' : `answered ${failure}`}`, async function () {
      sim.setFaults(
        failure === 'reset'
          ? { resetRate: 1, methods: ['POST'] }
          : { statusRate: 1, statusCode: Number(failure), methods: ['POST'] },
      );
      const server = serverFlow(sim, { withB: false });
      await loadFlow(
        [
          ...server.nodes,
          {
            id: 'poll',
            type: 'lh-error-poll',
            server: 'server',
            source: 'A',
            interval: 0.5,
            offlineAfter: 3,
            listen: false,
            snapshot: false,
            persist: false,
            version: 3,
            wires: [[], [], ['conn']],
          },
          { id: 'conn', type: 'helper' },
        ],
        server.credentials,
      );
      const connection = collect(helper.getNode('conn'));
      const warnings = (): string[] =>
        (helper.log() as unknown as { args: [Msg][] }).args
          .map(([entry]) => entry)
          .filter((entry) => entry.level === 30 && entry.type === 'lh-server')
          .map((entry) => String(entry.msg));
      await until(() => warnings().some((w) => /instrument unreachable/.test(w)), 'the lh-server saying the outage', 15_000);
      await until(() => connection.length > 0, 'the offline msg', 15_000);
      const line = warnings().find((w) => /instrument unreachable/.test(w)) ?? '';
      const reason = String(((connection[0] as Msg).payload as Msg).reason);
      for (const [what, text] of [
        ['the lh-server line', line],
        ['the offline msg reason', reason],
      ]) {
        assert.doesNotMatch(text, /not sent|next goes with a request in|\d s$/, `${what}: ${text}`);
        assert.match(
          text,
          failure === 'reset' ? /authenticate|socket|reset|connection/i : new RegExp(failure),
          `${what}: ${text}`,
        );
      }
    });
  }
});
