/**
 * Nothing lost on odd but real input: property names in any letter case, answers trickled byte by byte, error ids
 * made of dots, unknown routine fields, prototype keys, huge intervals and token lifetimes, oversized answers.
 */
import assert from 'node:assert/strict';
import http from 'http';
import { AddressInfo } from 'net';

import FakeTimers from '@sinonjs/fake-timers';

import { LhError, LiquidHandlerClient } from '../../src/client';
import { routineChanges } from '../../src/nodes/lh-service-routine/operations';
import { intervalMs } from '../../src/nodes/shared/poll-loop';
import { Simulator } from '../../src/simulator';
import { useClients } from '../support/client-suite';

const isValidation =
  (field: RegExp) =>
  (err: LhError): boolean =>
    err.kind === 'validation' && field.test(err.field ?? '');

describe('odd but real input', function () {
  const suite = useClients();
  const sim = suite.sim;

  describe('property names in any letter case', function () {
    let server: http.Server;
    let url = '';
    before(async function () {
      // An instrument answering in capitals, as an ASP.NET service configured for it does.
      server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.setHeader('Content-Type', 'application/json');
          if (req.url?.endsWith('/authenticate'))
            return res.end(JSON.stringify({ TOKEN: 'opaque-token', EXPIRESIN: 5, USERID: 'u1' }));
          res.end(
            JSON.stringify([
              {
                ID: 'e1',
                GROUPID: 'g1',
                TITLE: 'Pipetting arm crash',
                SEVERITY: 'Fatal',
                ErrorResponses: [{ RESPONSE: 'Abort' }],
                ERRORDATA: [{ ID: 'ch1', SelectedResponse: null }],
                VendorExtra: 1,
              },
            ]),
          );
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async function () {
      await new Promise((resolve) => server.close(resolve));
    });

    it('maps ID, TOKEN, ErrorResponses, ... to the known names, so a Fatal error is seen as one', async function () {
      const c = suite.make({ baseUrl: url, instrumentUrl: undefined });
      const [error] = await c.prep.pendingErrors();
      assert.equal(c.session.state, 'authenticated', 'TOKEN was read as the token');
      assert.equal(error.id, 'e1');
      assert.equal(error.groupId, 'g1');
      assert.equal(error.severity, 'Fatal');
      assert.deepEqual(error.errorResponses, [{ response: 'Abort' }]);
      assert.deepEqual(error.errorData, [{ id: 'ch1', selectedResponse: null }]);
      assert.equal(error.vendorExtra, 1, 'an unknown name keeps the camelCase rule');
    });
  });

  it('a body trickled at one byte per 100 ms fails at the 300 ms deadline instead of hanging', async function () {
    this.timeout(10000);
    const c = suite.make({ timeoutMs: 300 });
    const once = suite.make({ timeoutMs: 300, retries: 0 });
    await c.prep.getSoftwareSettings(); // logged in
    await once.prep.getSoftwareSettings();
    sim.setFaults({ trickleMs: 100 });
    const timed = async (client: typeof c): Promise<number> => {
      const started = Date.now();
      await assert.rejects(
        client.prep.getSoftwareSettings(),
        (err: LhError) => err.kind === 'timeout' && /within 300 ms/.test(err.message),
      );
      return Date.now() - started;
    };
    // One deadline for the request, retries included: with its retries it ends as soon as one attempt alone (a deadline
    // for each attempt would take three times as long; the body alone would need ~10 s). A ratio of two times measured
    // in this run, so a busy machine slows both alike.
    const alone = await timed(once);
    const withRetries = await timed(c);
    assert.ok(withRetries < 2 * alone + 100, `with retries ${withRetries} ms, one attempt alone ${alone} ms`);
  });

  it('refuses error ids made only of dots, sending nothing', async function () {
    const c = suite.make();
    for (const id of ['.', '..', '...']) {
      await assert.rejects(
        c.prep.getError(id),
        (err: LhError) => isValidation(/^errorId$/)(err) && /not only dots/.test(err.message),
      );
    }
    assert.equal(sim.requests.length, 0);
  });

  it('service-routine update refuses a field that is not a routine field, as settings do', function () {
    assert.throws(
      () => routineChanges({ routineId: 1, payload: { isRecommended: true, colour: 'red' }, markRunNow: false }),
      (err: LhError) =>
        isValidation(/^payload\.colour$/)(err) &&
        /is not a service routine field \(known: id, name, isRecommended, lastRun\)/.test(err.message),
    );
  });

  it('refuses __proto__, constructor and prototype keys anywhere in a payload, naming the key, before any login', async function () {
    const c = suite.make();
    const bodies: [string, RegExp][] = [
      ['{"stepType":"PauseStep","name":"p","options":{"__proto__":{"polluted":true}}}', /^payload\.options\.__proto__$/],
      ['{"stepType":"PauseStep","name":"p","constructor":{"prototype":{}}}', /^payload\.constructor$/],
      ['{"stepType":"PauseStep","name":"p","list":[{"prototype":1}]}', /^payload\.list\[0\]\.prototype$/],
    ];
    for (const [json, field] of bodies) {
      await assert.rejects(
        c.prep.createStep(1, JSON.parse(json)),
        (err: LhError) =>
          isValidation(field)(err) && /keys named __proto__, constructor or prototype are refused/.test(err.message),
      );
    }
    assert.equal(sim.requests.length, 0);
  });

  it('refuses a payload that holds itself (a tree with parent links) at once, naming where, and a prototype key too deep to look past', async function () {
    const c = suite.make();
    // each child links back to the tree: before, the key check walked every path of 64 levels through the links
    // (seconds for 2 children, hours for 3) before JSON.stringify threw a message naming no field
    const plate: Record<string, unknown> = { name: 'plate', wells: [] };
    for (const well of ['A1', 'A2']) (plate.wells as unknown[]).push({ name: well, plate });
    await assert.rejects(
      c.prep.createStep(1, { stepType: 'PauseStep', name: 'p', plate }),
      (err: LhError) => isValidation(/^payload\.plate\.wells\[0\]\.plate$/)(err) && /a body cannot be a cycle/.test(err.message),
    );
    // a prototype key below the levels the check walks was sent unchecked; now the nesting itself is refused
    let deep: Record<string, unknown> = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    for (let i = 0; i < 70; i++) deep = { deep };
    await assert.rejects(
      c.prep.createStep(1, { stepType: 'PauseStep', name: 'p', deep }),
      (err: LhError) => err.kind === 'validation' && /is nested deeper than 64 levels/.test(err.message),
    );
    assert.equal(sim.requests.length, 0);
  });

  it('clamps the poll interval to 24 h (a larger one would overflow the timer and poll every millisecond)', function () {
    assert.equal(intervalMs(1e12), 24 * 3600 * 1000);
    assert.equal(intervalMs(86400), 24 * 3600 * 1000);
    assert.equal(intervalMs(5), 5000);
  });

  it('an answer over the size limit says so, instead of "cannot reach"', async function () {
    const c = suite.make({ maxResponseBytes: 64 });
    await assert.rejects(c.prep.listSteps(1), (err: LhError) => {
      assert.match(err.message, /larger than 64 bytes, the limit of an answer/);
      assert.doesNotMatch(err.message, /cannot reach/);
      return true;
    });
  });

  describe('a token living longer than 24 days', function () {
    const longSim = new Simulator({ tokenLifetimeSeconds: 30 * 24 * 3600 });
    before(async function () {
      await longSim.start();
    });
    after(async function () {
      await longSim.stop();
    });

    it('does not overflow the renewal timer into an immediate renewal', async function () {
      const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'] });
      const c = new LiquidHandlerClient({ baseUrl: longSim.baseUrl, credentials: { username: 'admin', password: 'labwire' } });
      try {
        await c.prep.getSoftwareSettings();
        await clock.tickAsync(60_000);
        await c.prep.getSoftwareSettings();
        assert.equal(c.session.stats.renewals, 0);
        assert.equal(longSim.state.renewals, 0);
      } finally {
        clock.uninstall();
        await c.close();
      }
    });
  });
});
