/**
 * Review finding (fix75, after review70): a login answered with a 5xx came back as kind `auth`, and so did every login
 * held back after it (spaced out): the nodes said "login failed (503, not resent)", Catch nodes got `kind: 'auth'` as
 * for a wrong password, and the requests held back after such logins never counted towards offline (a reset or a
 * timeout at login, the network kind, did). A 5xx at login is the instrument's trouble, not the credentials': now it
 * has the server kind (`http`, with its status), the status line says "instrument error (login 503, not resent)",
 * and a refused login (401, 423) still says "login failed".
 *
 * Drawn over the classes of login failures (401 rejected, locked out, 500/502/503/504, a reset); seed printed,
 * LH_SEED / LH_CASES replay and extend.
 */
import assert from 'node:assert/strict';

import { fireThrough, lockOutAtInstrument, settingsReadNodes } from '../support/fire-through';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow, serverFlow, USER } from '../support/runtime';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;

type Failure = { how: 'rejected' } | { how: 'locked' } | { how: '5xx'; status: number } | { how: 'reset' };

/** What a user sees of each: msg.error's kind and the status line, for the first login and for the next request. */
function expected(f: Failure): { kind: string; status: RegExp } {
  switch (f.how) {
    case 'rejected':
      return { kind: 'auth', status: /^login failed \(rejected, 401\)$/ };
    case 'locked':
      return { kind: 'auth', status: /^login failed: user locked out$/ };
    case '5xx':
      return { kind: 'http', status: new RegExp(`^instrument error \\(login ${f.status}, not resent\\)$`) };
    case 'reset':
      return { kind: 'network', status: /^instrument unreachable$/ };
  }
}

describe('review: a 5xx answer to a login is the instrument failing, not the credentials refused', function () {
  this.timeout(30000);
  const sim = useInstrument({ simulator: { policy: { maximumLoginAttempts: 3 } }, afterEach: () => restartMemory() });
  before(() => console.log(`      seed ${SEED} (LH_SEED=${SEED} to replay), ${CASES} cases`));

  async function start(): Promise<void> {
    const f = serverFlow(sim, { withB: false });
    await loadFlow([...f.nodes, ...settingsReadNodes()], f.credentials);
  }

  const lastStatus = (): Msg => {
    const calls = (helper.getNode('get') as unknown as { status: { args: [Msg][] } }).status.args;
    return calls[calls.length - 1][0];
  };

  async function failLogins(f: Failure): Promise<void> {
    if (f.how === 'rejected') sim.setUserPassword(USER.username, 'changed-on-the-instrument');
    else if (f.how === '5xx') sim.setFaults({ statusRate: 1, statusCode: f.status, methods: ['POST'] });
    else if (f.how === 'reset') sim.setFaults({ resetRate: 1, methods: ['POST'] });
    else await lockOutAtInstrument(sim.baseUrl, USER.username);
  }

  const rng = new Rng(SEED);
  const classes: Failure[] = [{ how: 'rejected' }, { how: 'locked' }, { how: 'reset' }];
  for (let c = 0; c < CASES; c++) {
    // every other case a 5xx (the finding), else one of the other classes
    const f: Failure =
      c % 2 === 0 ? { how: '5xx', status: [500, 502, 503, 504][rng.below(4)] } : classes[rng.below(classes.length)];
    const name = f.how === '5xx' ? String(f.status) : f.how;
    it(`case ${c}: login ${name}: msg.error's kind and the status line say whose trouble it is`, async function () {
      await failLogins(f);
      await start();
      const want = expected(f);
      for (const attempt of ['the login', 'the request after it (held back or spaced out)']) {
        const r = await fireThrough('get');
        assert.equal(r.ok, false, `${attempt}: ${JSON.stringify(r.msg).slice(0, 600)}`);
        const error = r.msg.error as Msg;
        assert.equal(error.kind ?? (error.cause as Msg | undefined)?.kind, want.kind, `${attempt}: ${JSON.stringify(error)}`);
        assert.match(String(lastStatus().text), want.status, `${attempt}: ${String(lastStatus().text)}`);
        assert.equal(lastStatus().fill, 'red', attempt);
        if (f.how === '5xx') assert.doesNotMatch(String(error.message), /rejected|check the user name/, attempt);
      }
    });
  }
});
