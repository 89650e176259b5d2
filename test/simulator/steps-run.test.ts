/**
 * The simulator's protocol fidelity for protocols as code: while a run of a protocol is in progress, every write to
 * its steps is refused (409 naming the run) and nothing changes, other protocols stay writable, and writes work again
 * once the run has ended; the variant fields public clients show are checked for their type (400 naming the field).
 */
import { strict as assert } from 'node:assert';

import { bearer, describeStatus, type Harness, JSON_PATCH, JSON_TYPE, problemOf, startHarness } from './helpers';

describe('simulator: protocol steps while a run is in progress, and variant field types', function () {
  let h: Harness;
  let token: string;
  const base = '/api/v1/protocols';

  before(async function () {
    h = await startHarness();
  });
  after(async function () {
    await h.close();
  });
  beforeEach(async function () {
    h.sim.reset();
    token = await h.login();
  });

  const snapshot = (pid: number): string => JSON.stringify(h.sim.state.protocols.get(pid));

  it('refuses every write to the steps of the protocol being run with 409 naming the run; others stay writable', async function () {
    h.sim.runs.create({ protocolId: 1 }, 'operator');
    const before = snapshot(1);
    const json = bearer(token, JSON_TYPE);
    const writes = [
      () => h.a.post(`${base}/1/step`, { stepType: 'LidStep', name: 'Lid' }, bearer(token, JSON_PATCH)),
      () => h.a.put(`${base}/1/step`, { id: 1, stepType: 'PauseStep', name: 'Pause', duration: 5 }, json),
      () => h.a.put(`${base}/1/step/reorder-step`, [{ stepId: 3, stepOrder: 1 }], json),
      () => h.a.put(`${base}/1/step/rename/1`, { newName: 'Renamed' }, json),
      () => h.a.put(`${base}/1/step/disable/1`, { disabled: true }, json),
      () => h.a.delete(`${base}/1/step/2`, bearer(token)),
    ];
    for (const write of writes) {
      const res = await write();
      assert.equal(res.status, 409, describeStatus(res));
      assert.match(
        problemOf(res).title + String(problemOf(res).detail ?? ''),
        /Protocol 1 cannot be changed while a run of it is in progress/,
      );
    }
    assert.equal(snapshot(1), before, 'nothing changed');
    const other = await h.a.post(`${base}/2/step`, { stepType: 'LidStep', name: 'Lid' }, bearer(token, JSON_PATCH));
    assert.equal(other.status, 200, describeStatus(other));
    // reads go on
    assert.equal((await h.a.get(`${base}/1/step`, bearer(token))).status, 200);

    h.sim.runs.reset(); // the run has ended
    const after = await h.a.put(`${base}/1/step/rename/1`, { newName: 'Renamed' }, json);
    assert.equal(after.status, 204, describeStatus(after));
  });

  it('refuses a variant field of the wrong type with 400 naming it, on create and update, and stores nothing', async function () {
    const before = snapshot(1);
    const create = await h.a.post(
      `${base}/1/step`,
      { stepType: 'PauseStep', name: 'P', duration: 'long' },
      bearer(token, JSON_PATCH),
    );
    assert.equal(create.status, 400, describeStatus(create));
    assert.ok(problemOf(create).errors?.duration?.[0].match(/duration field of a PauseStep must be a number/));
    const update = await h.a.put(
      `${base}/1/step`,
      { id: 3, name: 'Incubate', rpm: true, Channelselection: 'x' },
      bearer(token, JSON_TYPE),
    );
    assert.equal(update.status, 400, describeStatus(update));
    assert.ok(problemOf(update).errors?.rpm);
    const transfer = await h.a.post(
      `${base}/1/step`,
      { stepType: 'TransferSamplesStep', name: 'T', channelSelection: 'NineChannel' },
      bearer(token, JSON_PATCH),
    );
    assert.equal(transfer.status, 400);
    assert.ok(problemOf(transfer).errors?.channelSelection?.[0].match(/OneChannel, TwoChannel, EightChannel/));
    assert.equal(snapshot(1), before);
    // null is an unset value; unknown fields and other variants' fields are kept as sent
    const ok = await h.a.post(
      `${base}/1/step`,
      { stepType: 'PauseStep', name: 'Q', duration: null, colour: 'red' },
      bearer(token, JSON_PATCH),
    );
    assert.equal(ok.status, 200, describeStatus(ok));
    assert.equal((ok.data as { colour: string }).colour, 'red');
  });
});
