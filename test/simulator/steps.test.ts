import { strict as assert } from 'node:assert';

import { bearer, describeStatus, JSON_PATCH, JSON_TYPE, problemOf, useLoggedInHarness } from './helpers';

interface StepDto {
  stepType: string;
  id: number;
  name: string;
  stepOrder: number;
  disabled: boolean;
  [k: string]: unknown;
}

describe('simulator: protocol steps (4.1)', function () {
  const h = useLoggedInHarness();
  const base = '/api/v1/protocols';

  const list = async (pid: number, query = ''): Promise<StepDto[]> => {
    const res = await h.a.get(`${base}/${pid}/step${query}`, bearer(h.token));
    assert.equal(res.status, 200, describeStatus(res));
    return res.data as StepDto[];
  };

  it('lists the seeded demo protocol in stepOrder with full data by default', async function () {
    const steps = await list(1);
    assert.deepEqual(
      steps.map((s) => s.stepOrder),
      [1, 2, 3],
    );
    assert.deepEqual(
      steps.map((s) => s.stepType),
      ['PauseStep', 'AddReagentStep', 'HeatShakeStep'],
    );
    assert.equal(steps[2].rpm, 800);
    assert.deepEqual(await list(2), []);
  });

  it('includeFullStepData=false returns only the common fields; offset and limit page', async function () {
    const brief = await list(1, '?includeFullStepData=false');
    assert.deepEqual(Object.keys(brief[0]).sort(), ['disabled', 'id', 'name', 'stepOrder', 'stepType']);
    const page = await list(1, '?offset=1&limit=1');
    assert.equal(page.length, 1);
    assert.equal(page[0].stepOrder, 2);
    const bad = await h.a.get(`${base}/1/step?limit=abc`, bearer(h.token));
    assert.equal(bad.status, 400);
    problemOf(bad);
  });

  it('creates a step with variant fields kept as sent, appended at the end, makeNameUnique not stored', async function () {
    const body = {
      stepType: 'TransferSamplesStep',
      name: 'Transfer',
      channelSelection: 'EightChannel',
      sources: [{ labware: 'Tubes' }],
      makeNameUnique: false,
    };
    const res = await h.a.post(`${base}/1/step`, body, bearer(h.token, JSON_PATCH));
    assert.equal(res.status, 200, describeStatus(res));
    const step = res.data as StepDto;
    assert.equal(step.stepOrder, 4);
    assert.equal(step.disabled, false);
    assert.equal(step.channelSelection, 'EightChannel');
    assert.deepEqual(step.sources, [{ labware: 'Tubes' }]);
    assert.ok(!('makeNameUnique' in step));
    assert.ok(Number.isInteger(step.id));
    const got = await h.a.get(`${base}/1/step/${step.id}`, bearer(h.token));
    assert.deepEqual(got.data, step);
  });

  it('makeNameUnique appends (2), (3); without it duplicates are allowed', async function () {
    const make = async (makeNameUnique?: boolean): Promise<string> => {
      const res = await h.a.post(
        `${base}/2/step`,
        { stepType: 'PauseStep', name: 'Wait', makeNameUnique },
        bearer(h.token, JSON_PATCH),
      );
      assert.equal(res.status, 200, describeStatus(res));
      return (res.data as StepDto).name;
    };
    assert.equal(await make(true), 'Wait');
    assert.equal(await make(true), 'Wait (2)');
    assert.equal(await make(true), 'Wait (3)');
    assert.equal(await make(false), 'Wait');
    assert.equal(await make(), 'Wait');
  });

  it('inserts at a given stepOrder and renumbers', async function () {
    const res = await h.a.post(
      `${base}/1/step`,
      { stepType: 'LidStep', name: 'Lid off', stepOrder: 1 },
      bearer(h.token, JSON_PATCH),
    );
    assert.equal((res.data as StepDto).stepOrder, 1);
    assert.deepEqual(
      (await list(1)).map((s) => [s.name, s.stepOrder]),
      [
        ['Lid off', 1],
        ['Pause for plate check', 2],
        ['Add buffer', 3],
        ['Incubate', 4],
      ],
    );
  });

  it('rejects an unknown stepType (listing the 16), a missing name, wrong media type, bad JSON', async function () {
    const badType = await h.a.post(`${base}/1/step`, { stepType: 'DanceStep', name: 'x' }, bearer(h.token, JSON_PATCH));
    assert.equal(badType.status, 400);
    const p = problemOf(badType);
    assert.match(p.errors?.stepType?.[0] ?? '', /AddReagentStep.*HepaStep/);
    const noName = await h.a.post(`${base}/1/step`, { stepType: 'PauseStep' }, bearer(h.token, JSON_PATCH));
    assert.equal(noName.status, 400);
    assert.ok(problemOf(noName).errors?.name);
    const wrongMedia = await h.a.post(`${base}/1/step`, { stepType: 'PauseStep', name: 'x' }, bearer(h.token, JSON_TYPE));
    assert.equal(wrongMedia.status, 415);
    const broken = await h.a.post(`${base}/1/step`, '{nope', bearer(h.token, JSON_PATCH));
    assert.equal(broken.status, 400);
    assert.equal((await list(1)).length, 3);
  });

  it('404 for unknown protocol or step, 400 for ids that are not int32 >= 0', async function () {
    assert.equal((await h.a.get(`${base}/99/step`, bearer(h.token))).status, 404);
    assert.equal((await h.a.get(`${base}/1/step/9999`, bearer(h.token))).status, 404);
    assert.equal((await h.a.delete(`${base}/1/step/9999`, bearer(h.token))).status, 404);
    for (const bad of ['abc', '-1', '3000000000', '1.5']) {
      const res = await h.a.get(`${base}/${bad}/step`, bearer(h.token));
      assert.equal(res.status, 400, `protocolId ${bad}`);
      problemOf(res);
    }
    assert.equal((await h.a.get(`${base}/1/step/x`, bearer(h.token))).status, 400);
  });

  it('PUT step replaces the stored fields and keeps stepOrder', async function () {
    const [first] = await list(1);
    const res = await h.a.put(
      `${base}/1/step`,
      { id: first.id, stepType: 'PauseStep', name: 'Longer pause', duration: 90 },
      bearer(h.token, JSON_TYPE),
    );
    assert.equal(res.status, 200, describeStatus(res));
    const updated = res.data as StepDto;
    assert.equal(updated.name, 'Longer pause');
    assert.equal(updated.duration, 90);
    assert.equal(updated.stepOrder, 1);
    assert.ok(!('message' in updated), 'variant fields are replaced, not merged');
    assert.equal(
      (await h.a.put(`${base}/1/step`, { id: 9999, stepType: 'PauseStep', name: 'x' }, bearer(h.token, JSON_TYPE))).status,
      404,
    );
    assert.equal((await h.a.put(`${base}/1/step`, { stepType: 'PauseStep', name: 'x' }, bearer(h.token, JSON_TYPE))).status, 400);
    assert.equal((await h.a.put(`${base}/1/step`, { id: first.id, name: 'x' }, bearer(h.token, JSON_PATCH))).status, 415);
  });

  it('reorders, renumbering 1..n; rejects ids of other protocols', async function () {
    const [a, b, c] = await list(1);
    const res = await h.a.put(
      `${base}/1/step/reorder-step`,
      [
        { stepId: c.id, stepOrder: 1 },
        { stepId: a.id, stepOrder: 3 },
      ],
      bearer(h.token, JSON_TYPE),
    );
    assert.equal(res.status, 204, describeStatus(res));
    assert.deepEqual(
      (await list(1)).map((s) => [s.id, s.stepOrder]),
      [
        [c.id, 1],
        [b.id, 2],
        [a.id, 3],
      ],
    );
    const foreign = await h.a.post(`${base}/2/step`, { stepType: 'PauseStep', name: 'other' }, bearer(h.token, JSON_PATCH));
    const bad = await h.a.put(
      `${base}/1/step/reorder-step`,
      [{ stepId: (foreign.data as StepDto).id, stepOrder: 1 }],
      bearer(h.token, JSON_TYPE),
    );
    assert.equal(bad.status, 400);
    problemOf(bad);
    assert.equal((await h.a.put(`${base}/1/step/reorder-step`, { stepId: a.id }, bearer(h.token, JSON_TYPE))).status, 400);
    const twice = await h.a.put(
      `${base}/1/step/reorder-step`,
      [
        { stepId: a.id, stepOrder: 1 },
        { stepId: a.id, stepOrder: 2 },
      ],
      bearer(h.token, JSON_TYPE),
    );
    assert.equal(twice.status, 400);
    assert.equal((await list(1)).length, 3);
  });

  it('renames (non-empty) and disables/enables a step', async function () {
    const [a] = await list(1);
    assert.equal(
      (await h.a.put(`${base}/1/step/rename/${a.id}`, { newName: 'Renamed' }, bearer(h.token, JSON_TYPE))).status,
      204,
    );
    assert.equal((await h.a.put(`${base}/1/step/rename/${a.id}`, { newName: '' }, bearer(h.token, JSON_TYPE))).status, 400);
    assert.equal((await h.a.put(`${base}/1/step/disable/${a.id}`, { disabled: true }, bearer(h.token, JSON_TYPE))).status, 204);
    let step = (await h.a.get(`${base}/1/step/${a.id}`, bearer(h.token))).data as StepDto;
    assert.equal(step.name, 'Renamed');
    assert.equal(step.disabled, true);
    assert.equal((await h.a.put(`${base}/1/step/disable/${a.id}`, { disabled: false }, bearer(h.token, JSON_TYPE))).status, 204);
    step = (await h.a.get(`${base}/1/step/${a.id}`, bearer(h.token))).data as StepDto;
    assert.equal(step.disabled, false);
    assert.equal((await h.a.put(`${base}/1/step/disable/${a.id}`, { disabled: 'yes' }, bearer(h.token, JSON_TYPE))).status, 400);
    assert.equal((await h.a.put(`${base}/1/step/rename/9999`, { newName: 'x' }, bearer(h.token, JSON_TYPE))).status, 404);
  });

  it('deletes a step and renumbers the rest', async function () {
    const [a, b, c] = await list(1);
    assert.equal((await h.a.delete(`${base}/1/step/${b.id}`, bearer(h.token))).status, 204);
    assert.deepEqual(
      (await list(1)).map((s) => [s.id, s.stepOrder]),
      [
        [a.id, 1],
        [c.id, 2],
      ],
    );
  });

  it('requires a token for every step operation', async function () {
    assert.equal((await h.a.get(`${base}/1/step`)).status, 401);
    assert.equal(
      (await h.a.post(`${base}/1/step`, { stepType: 'PauseStep', name: 'x' }, { headers: { 'Content-Type': JSON_PATCH } }))
        .status,
      401,
    );
    assert.equal((await h.a.delete(`${base}/1/step/1`)).status, 401);
  });

  it('addProtocol() gives a new empty protocol', async function () {
    const id = h.sim.addProtocol('Mine');
    assert.deepEqual(await list(id), []);
    assert.equal(h.sim.state.protocols.get(id)?.name, 'Mine');
  });
});
