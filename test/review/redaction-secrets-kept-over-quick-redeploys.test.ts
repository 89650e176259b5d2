/**
 * README "Security": no password in msg, status or logs, also when an instrument echoes them. Each lh-server (and
 * lh-coordination) node keeps its secrets in the redaction step's list until its close has ended (its last login,
 * refused, may quote the password: login-refused-while-redeploying-echoes-password.test.ts). Several deploys in a
 * few seconds (a person clicking Deploy while changing a password, a script deploying flows) start a node of the
 * same id for each while the earlier ones still close: every one of them, and the live one, keeps its secrets
 * redacted until it forgets them, whatever the order the closes end in. At most 4 lists per id were kept: the fifth
 * quick deploy dropped the first closing node's password, and what it said next went out as it was.
 * Seeded: drawn numbers of quick deploys (up to 20) and close orders; LH_SEED replays.
 */
import assert from 'node:assert/strict';

import { forgetSecrets, redact, rememberSecrets } from '../../src/nodes/shared/redaction';
import { parseSeed, Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? parseSeed(process.env.LH_SEED) : Date.now() % 2 ** 32;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 50;

describe('review: secrets of nodes still closing are kept over quick redeploys', function () {
  this.timeout(15000);

  it('5 quick deploys: the first node, still closing, keeps its password redacted', function () {
    const id = 'srv-quick-5';
    const kept = [1, 2, 3, 4, 5].map((i) => rememberSecrets(id, [`Pw-deploy-${i}-xyz`]));
    for (let i = 1; i <= 5; i++) assert.equal(redact(`refused: Pw-deploy-${i}-xyz`), 'refused: ***', `deploy ${i}`);
    for (const k of kept) forgetSecrets(id, k);
    assert.equal(redact('refused: Pw-deploy-1-xyz'), 'refused: Pw-deploy-1-xyz'); // all closed: forgotten
  });

  it(`drawn deploys and close orders (seed ${SEED}, ${CASES} cases)`, function () {
    console.log(`      quick-redeploy seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const id = `srv-quick-${c}`;
      const live = new Map<number, readonly string[]>();
      const n = rng.int(1, 20);
      for (let i = 0; i < n; i++) live.set(i, rememberSecrets(id, [`Pw-${c}-${i}-secret`, `Tok-${c}-${i}-abc`]));
      const order = [...live.keys()].sort(() => rng.next() - 0.5);
      for (const i of order) {
        for (const j of live.keys()) {
          const said = redact(`login refused with Pw-${c}-${j}-secret, token Tok-${c}-${j}-abc`);
          assert.equal(said, 'login refused with ***, token ***', `seed ${SEED} case ${c}: node ${j} of ${n}`);
        }
        forgetSecrets(id, live.get(i));
        live.delete(i);
      }
    }
  });
});
