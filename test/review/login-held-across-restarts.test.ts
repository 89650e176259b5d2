/**
 * Review finding (fix75, lockout): a rejected user name and password were held back (no more logins) until a Test
 * connection with them succeeded, but only in this process's memory. A Node-RED in a crash-restart loop (systemd, a
 * container's restart policy) with a wrong password sent it once per start, and the instrument locks the user out
 * after `maximumLoginAttempts`. Now the rejection is kept in the user directory (`lh-login-holds/`, a file named by a
 * digest of the instrument and the credentials, holding the state, status and time only): a restart holds the same
 * credentials back, changed credentials go at once, and a Test connection that succeeds deletes it.
 *
 * Drawn over the refusals (rejected 401, locked out, expired password) and the number of restarts; seed printed,
 * LH_SEED / LH_CASES replay and extend.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { fireThrough, lockOutAtInstrument, settingsReadNodes } from '../support/fire-through';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow, runtimeSettings, serverFlow, USER } from '../support/runtime';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;
const REFUSALS = ['rejected', 'locked', 'expired'] as const;
type Refusal = (typeof REFUSALS)[number];

describe('review: a rejected login stays held back across restarts of Node-RED', function () {
  this.timeout(30000);
  const sim = useInstrument({
    simulator: { policy: { maximumLoginAttempts: 3 } },
    adminServer: true,
    afterEach: () => restartMemory(),
  });
  let userDir = '';
  before(() => console.log(`      seed ${SEED} (LH_SEED=${SEED} to replay), ${CASES} cases`));
  beforeEach(() => {
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-held-'));
    runtimeSettings({ userDir });
  });
  afterEach(() => {
    runtimeSettings({ userDir: undefined });
    fs.rmSync(userDir, { recursive: true, force: true });
  });

  const failedLogins = (): number =>
    sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/authenticate' && r.status >= 400).length;

  async function start(password = USER.password): Promise<void> {
    const f = serverFlow(sim, { withB: false, credentials: { ...USER, password } });
    await loadFlow([...f.nodes, ...settingsReadNodes()], f.credentials);
  }

  /** Node-RED stopped and started again (its memory gone, its user directory kept). */
  async function restart(password?: string): Promise<void> {
    await helper.unload();
    restartMemory();
    await start(password);
  }

  const messageOf = (r: { msg: Msg }): string => String((r.msg.error as Msg | undefined)?.message);

  /** Makes the instrument refuse USER's login that way (locked: someone typed a wrong password at it three times). */
  async function refuse(how: Refusal): Promise<void> {
    if (how === 'rejected') sim.setUserPassword(USER.username, 'changed-on-the-instrument');
    else if (how === 'expired') sim.setUserPasswordExpired(USER.username, true);
    else {
      await lockOutAtInstrument(sim.baseUrl, USER.username);
    }
  }

  const words: Record<Refusal, RegExp> = {
    rejected: /was rejected \(401, at .*before this start of Node-RED\).*Test connection.*delete the folder .*lh-login-holds/,
    locked: /locked out .*before this start of Node-RED.*Test connection.*delete the folder .*lh-login-holds/,
    expired: /password of user .* has expired .*before this start of Node-RED/,
  };

  const rng = new Rng(SEED);
  for (let c = 0; c < CASES; c++) {
    const how = REFUSALS[rng.below(REFUSALS.length)];
    const restarts = rng.int(2, 4);
    it(`case ${c}: ${how}, ${restarts} restarts: no failed login more, then Test connection lets it go`, async function () {
      await refuse(how);
      await start();
      const before = failedLogins();
      const first = await fireThrough('get');
      assert.equal(first.ok, false);
      const sent = failedLogins() - before;
      assert.ok(sent <= 1, `${sent} failed logins`);
      for (let i = 0; i < restarts; i++) {
        await restart();
        const r = await fireThrough('get');
        assert.equal(r.ok, false, `restart ${i + 1}: logged in`);
        assert.equal(failedLogins() - before, sent, `restart ${i + 1} sent the refused password again`);
        assert.match(messageOf(r), words[how], `restart ${i + 1}`);
      }
      const files = fs.readdirSync(path.join(userDir, 'lh-login-holds'));
      for (const f of files) {
        const text = fs.readFileSync(path.join(userDir, 'lh-login-holds', f), 'utf8');
        assert.ok(!text.includes(USER.password) && !text.includes(USER.username), `${f} holds a credential: ${text}`);
        if (process.platform !== 'win32') assert.equal(fs.statSync(path.join(userDir, 'lh-login-holds', f)).mode & 0o077, 0);
      }

      // changed credentials are another key: tried at once (and refused by the instrument, which knows the old one)
      if (how === 'rejected') {
        await restart('another-wrong-one');
        await fireThrough('get');
        assert.equal(failedLogins() - before, sent + 1, 'changed credentials were not tried');
      }

      // the administrator puts things right on the instrument, a user presses Test connection: the hold is gone
      if (how === 'rejected') sim.setUserPassword(USER.username, USER.password);
      if (how === 'expired') sim.setUserPasswordExpired(USER.username, false);
      if (how === 'locked') sim.reset();
      await restart();
      const res = await helper
        .request()
        .post('/lh-server/test-connection')
        .send({ id: 'server', baseUrl: sim.baseUrl, instrumentUrl: '', tls: '', username: USER.username, password: '__PWRD__' });
      assert.equal((res.body as { ok: boolean }).ok, true, JSON.stringify(res.body));
      assert.equal((await fireThrough('get')).ok, true, 'still held after Test connection');
      await restart();
      assert.equal((await fireThrough('get')).ok, true, 'held again after a restart');
    });
  }
});
