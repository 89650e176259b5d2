import assert from 'node:assert/strict';

import { LoggedRequest } from '../../src/simulator';
import { configuredNode, useAdminServer, useInstrument } from '../support/node-suite';
import { helper } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('lh-service-routine', function () {
  const sim = useInstrument();

  function sent(): LoggedRequest[] {
    return sim.requests.filter((r) => r.api === 'A' && !r.path.startsWith('/api/v1/authenticate'));
  }

  function routine(id: number): Msg {
    const found = sim.state.serviceRoutines.find((r) => r.id === id);
    assert.ok(found);
    return { ...found };
  }

  // only the modules this file needs (every type of package.json may not be built yet)
  const { load, run, runFailing } = configuredNode(
    sim,
    { id: 'routine', type: 'lh-service-routine' },
    { only: ['lh-server', 'lh-service-routine'] },
  );

  describe('list', function () {
    it('lists every routine and keeps other msg properties', async function () {
      const msg = await run({ operation: 'list' }, { topic: 'routines', keep: true });
      assert.deepEqual(
        (msg.payload as Msg[]).map((r) => r.id),
        [1, 2, 3, 4],
      );
      assert.equal(msg.statusCode, 200);
      assert.equal(msg.keep, true);
      const [req] = sent();
      assert.equal(req.method, 'GET');
      assert.equal(req.path, '/api/v1/verification/service-routines');
      assert.match(req.authorization ?? '', /^Bearer ey/);
    });

    it('keeps only recommended routines when asked, in the dialog or by msg.recommendedOnly', async function () {
      let msg = await run({ operation: 'list', recommendedOnly: true }, {});
      assert.deepEqual(
        (msg.payload as Msg[]).map((r) => r.id),
        [1, 3],
      );
      await helper.unload();
      msg = await run({ operation: 'msg' }, { operation: 'list', recommendedOnly: true });
      assert.deepEqual(
        (msg.payload as Msg[]).map((r) => r.id),
        [1, 3],
      );
    });
  });

  describe('get', function () {
    it('gets the routine of the dialog', async function () {
      const msg = await run({ operation: 'get', routineId: '2', routineIdType: 'num' }, {});
      assert.deepEqual(msg.payload, { id: 2, name: 'Weekly maintenance', isRecommended: false, lastRun: '2024-04-29T08:00:00Z' });
      assert.equal(sent()[0].path, '/api/v1/verification/service-routines/2');
    });

    it('takes msg.routineId when the dialog leaves it empty, and a template over msg', async function () {
      let msg = await run({ operation: 'get', routineId: '' }, { routineId: '3' });
      assert.equal((msg.payload as Msg).name, 'Channel leak check');
      await helper.unload();
      msg = await run({ operation: 'get', routineId: '{{payload.routine}}', routineIdType: 'str' }, { payload: { routine: 4 } });
      assert.equal((msg.payload as Msg).id, 4);
    });

    it('fails with 404 for an unknown routine', async function () {
      const error = await runFailing({ operation: 'get', routineId: '99', routineIdType: 'num' }, {});
      assert.equal(error.statusCode, 404);
      assert.equal(error.operation, 'get-service-routine');
    });

    it('rejects an id that is not an int32 ≥ 0 and sends nothing', async function () {
      const error = await runFailing({ operation: 'get', routineId: '' }, { routineId: 'one' });
      assert.equal(error.field, 'routineId');
      assert.match(String(error.message), /must be a whole number from 0 to 2147483647/);
      assert.equal(sim.requests.length, 0);
    });
  });

  describe('update', function () {
    it('merges a partial payload into the routine, writes it and outputs it read back', async function () {
      const msg = await run({ operation: 'update', routineId: '2', routineIdType: 'num' }, { payload: { isRecommended: true } });
      const expected = { id: 2, name: 'Weekly maintenance', isRecommended: true, lastRun: '2024-04-29T08:00:00Z' };
      assert.deepEqual(msg.payload, expected);
      assert.deepEqual(routine(2), expected);
      const [read, write, readBack] = sent();
      assert.equal(sent().length, 3);
      assert.deepEqual([read.method, read.path], ['GET', '/api/v1/verification/service-routines/2']);
      assert.deepEqual([write.method, write.path], ['PUT', '/api/v1/verification/service-routines']);
      assert.equal(write.contentType, 'application/json-patch+json');
      assert.deepEqual(write.body, expected);
      assert.match(write.authorization ?? '', /^Bearer ey/);
      assert.deepEqual([readBack.method, readBack.path], ['GET', '/api/v1/verification/service-routines/2']);
    });

    it('marks the routine as run now, whatever the payload (an inject timestamp)', async function () {
      const before = Date.now();
      const msg = await run({ operation: 'update', routineId: '', markRunNow: true }, { routineId: 3, payload: 1700000000000 });
      const lastRun = String((msg.payload as Msg).lastRun);
      const t = Date.parse(lastRun);
      assert.ok(t >= before - 1000 && t <= Date.now() + 1000, `lastRun ${lastRun} is now`);
      assert.equal(routine(3).lastRun, lastRun);
      assert.equal((sent()[1].body as Msg).lastRun, lastRun);
      assert.equal((sent()[1].body as Msg).name, 'Channel leak check');
    });

    it('takes the id from payload.id and markRunNow from msg when the dialog leaves them empty', async function () {
      const msg = await run(
        { operation: 'msg' },
        { operation: 'update', markRunNow: true, payload: { id: 4, name: 'Camera check' } },
      );
      assert.equal((msg.payload as Msg).name, 'Camera check');
      assert.notEqual((msg.payload as Msg).lastRun, null);
    });

    it('rejects bad fields, a missing id, a conflicting id or nothing to change, and sends nothing', async function () {
      const cases: [Record<string, unknown>, Msg, string, RegExp][] = [
        [
          { routineId: '1', routineIdType: 'num' },
          { payload: { isRecommended: 'yes' } },
          'payload.isRecommended',
          /must be a boolean/,
        ],
        [{ routineId: '1', routineIdType: 'num' }, { payload: { lastRun: 'yesterday' } }, 'payload.lastRun', /ISO 8601/],
        [{ routineId: '1', routineIdType: 'num' }, { payload: { name: 5 } }, 'payload.name', /text or null/],
        [{ routineId: '' }, { payload: { isRecommended: true } }, 'routineId', /is required/],
        [
          { routineId: '1', routineIdType: 'num' },
          { payload: { id: 2, isRecommended: true } },
          'routineId',
          /differs from payload.id/,
        ],
        [{ routineId: '1', routineIdType: 'num' }, { payload: {} }, 'payload', /names no field to change/],
        [{ routineId: '1', routineIdType: 'num' }, { payload: 'run' }, 'payload', /must be an object/],
        [{ routineId: '1', routineIdType: 'num' }, { payload: {}, markRunNow: 'yes' }, 'markRunNow', /must be a boolean/],
      ];
      for (const [config, msg, field, rule] of cases) {
        const error = await runFailing({ operation: 'update', ...config }, msg);
        assert.equal(error.field, field, `${JSON.stringify(msg)}`);
        assert.match(String(error.message), rule);
        await helper.unload();
      }
      assert.equal(sim.requests.length, 0);
    });

    it('fails with 404 for an unknown routine before writing anything', async function () {
      const error = await runFailing(
        { operation: 'update', routineId: '42', routineIdType: 'num' },
        { payload: { isRecommended: true } },
      );
      assert.equal(error.statusCode, 404);
      assert.equal(sent().filter((r) => r.method === 'PUT').length, 0);
    });
  });

  it('rejects an unknown msg.operation and sends nothing', async function () {
    const error = await runFailing({ operation: 'msg' }, { operation: 'run' });
    assert.equal(error.field, 'operation');
    assert.match(String(error.message), /must be one of list, get, update/);
    assert.equal(sim.requests.length, 0);
  });

  describe('editor admin endpoint', function () {
    useAdminServer();

    it('lists the routines of the deployed instrument for the pick button', async function () {
      await load({ operation: 'get' });
      const res = await helper.request().get('/lh-server/server/service-routines').expect(200);
      assert.equal((res.body as Msg[]).length, 4);
      assert.deepEqual((await helper.request().get('/lh-server/missing/service-routines').expect(200)).body, []);
    });
  });
});
