/**
 * Issue 17.7: run ids that are path segments of their own (`.`, `..`) never become a request path, and a settings
 * payload with an own `__proto__` (or `constructor`, `prototype`) key is refused, naming the field, before anything
 * is sent. Each with a property over generated ids and payloads.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError } from '../../src/client';
import { runId } from '../../src/client/runs';
import { setSoftwareSettings } from '../../src/nodes/lh-settings/operations';
import { useClients } from '../support/client-suite';

const SETTINGS = { hideKeyboard: true, defaultAmbientTemperature: 21 };

describe('odd input: dot-segment run ids and prototype keys', function () {
  const suite = useClients();
  const sim = suite.sim;

  it('refuses run ids . and .. (and only dots) before sending: get, report and pipetting CSV', async function () {
    const c = suite.make();
    await c.prep.getSoftwareSettings(); // logged in
    sim.clearRequests();
    for (const id of ['.', '..', '...']) {
      for (const call of [() => c.runs.getRunData(id), () => c.runs.runReport(id), () => c.runs.pipettingCsv(id)]) {
        await assert.rejects(
          async () => call(),
          (err: LhError) => err.kind === 'validation' && err.field === 'runId' && /not only dots/.test(err.message),
        );
      }
    }
    assert.deepEqual(
      sim.requests.map((r) => r.path),
      [],
      'nothing was sent (no GET /api/v1/run-data/, /api/v1/ or /api/v1/pdf)',
    );
  });

  it('property: an accepted run id is exactly one path segment below run-data, never a dot segment', function () {
    const idChars = fc.constantFrom('.', '/', '\\', '%', '2', 'e', 'E', 'a', '-', '_', '~', ':', '?', '#', ' ');
    const ids = fc.oneof(
      fc.string({ unit: idChars, maxLength: 12 }),
      fc.constantFrom('.', '..', '%2e', '%2e%2e', '.%2e', '..%2f', '../pdf', 'a/..', '..\\', 'a/b'),
      fc.integer({ min: -5, max: 1e9 }),
    );
    fc.assert(
      fc.property(ids, (id) => {
        let accepted: string;
        try {
          accepted = runId(id, 'runId', 'get-run-data');
        } catch (err) {
          assert.ok(err instanceof LhError && err.kind === 'validation' && err.field === 'runId');
          return;
        }
        const segment = encodeURIComponent(accepted);
        const url = new URL(`http://x/api/v1/run-data/${segment}/pdf`);
        assert.equal(url.pathname, `/api/v1/run-data/${segment}/pdf`, `${JSON.stringify(id)} changed the path`);
        assert.ok(!/^\.+$/.test(accepted) && !/%2e/i.test(accepted) && !/[/\\]/.test(accepted));
      }),
      { numRuns: 1000 },
    );
  });

  for (const key of ['__proto__', 'constructor', 'prototype']) {
    it(`merge and replace refuse a payload with an own ${key} key, naming it, before sending`, async function () {
      const c = suite.make();
      await c.prep.getSoftwareSettings();
      sim.clearRequests();
      const payload = JSON.parse(`{"defaultAmbientTemperature": 21, "${key}": {"hideKeyboard": false}}`) as unknown;
      assert.ok(Object.prototype.hasOwnProperty.call(payload, key));
      for (const mode of ['merge', 'replace'] as const) {
        await assert.rejects(
          setSoftwareSettings(c.baseUrl, c.prep, payload, mode),
          (err: LhError) => err.kind === 'validation' && err.field === `payload.${key}` && /is not allowed/.test(err.message),
        );
      }
      assert.deepEqual(
        sim.requests.filter((r) => r.method !== 'GET'),
        [],
        'nothing written',
      );
    });
  }

  it('property: a payload is written only when every own key is a known setting', async function () {
    const c = suite.make();
    const before = await c.prep.getSoftwareSettings();
    const key = fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      'defaultAmbientTemperature',
      'hideKeyboard',
      'x',
    );
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(key, { minLength: 1, maxLength: 4 }), async (keys) => {
        const text = `{${keys.map((k) => `"${k}": ${k === 'hideKeyboard' ? 'true' : '21'}`).join(',')}}`;
        const payload = JSON.parse(text) as unknown;
        const bad = keys.find((k) => !(k in SETTINGS) || !Object.prototype.hasOwnProperty.call(SETTINGS, k));
        sim.clearRequests();
        if (bad === undefined) {
          await setSoftwareSettings(c.baseUrl, c.prep, payload, 'merge');
          return;
        }
        await assert.rejects(
          setSoftwareSettings(c.baseUrl, c.prep, payload, 'merge'),
          (err: LhError) => err.kind === 'validation' && /^payload\./.test(err.field ?? ''),
        );
        assert.equal(sim.requests.filter((r) => r.method !== 'GET').length, 0, `${text} was written`);
        assert.equal(Object.prototype.hasOwnProperty.call({}, 'hideKeyboard'), false, 'no prototype was changed');
      }),
      { numRuns: 60 },
    );
    await c.prep.setSoftwareSettings(before);
  });
});
