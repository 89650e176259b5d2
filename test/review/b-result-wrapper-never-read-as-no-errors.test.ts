/**
 * Review (interfaces.md 2.9; observed-instrument.md, B: "other operations of the same API return wrappers like
 * {succeeded, message, hasValue, value} or {result, message}"). GET instrument-errors/unhandled read every answer that
 * was not `success: false` with an array `data` as "no unhandled errors": a refusal spelled `succeeded: false`, the
 * errors listed as `value`, or an answer that is no wrapper at all (`{}`) reported an instrument with errors waiting as
 * one without, and a submission the instrument accepted with `succeeded: true` was reported refused.
 *
 * Property over drawn wrappers (seeded: LH_SEED replays, LH_CASES draws more), key casing as the instrument may send
 * it (the transport maps names as for every answer): the flag `success`, `succeeded` or none, true or false; the list
 * as `data` or `value`, an array, null, left out, or no list; extra fields. A failure is the instrument's refusal, a
 * list is read whole, no list is "none" only when the wrapper says success, anything else is refused as unreadable;
 * a submission is accepted exactly when the flag says true. Through InstrumentApi with the answer as the transport
 * hands it over (names mapped as for every answer): B is HTTPS, and the simulator answers the contract's wrapper only.
 */
import assert from 'node:assert/strict';

import { LhError } from '../../src/client/errors';
import { answering, RECOVERY } from '../support/b-answers';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;

type Expected = { kind: 'list'; uuids: string[] } | { kind: 'refused' } | { kind: 'unreadable' };

function cased(rng: Rng, key: string): string {
  return rng.pick([key, key[0].toUpperCase() + key.slice(1), key.toUpperCase()]);
}

function draw(rng: Rng): { wire: Record<string, unknown>; expected: Expected; flag: boolean | undefined } {
  const wire: Record<string, unknown> = {};
  const flagKey = rng.pick(['success', 'succeeded', undefined]);
  const flag = flagKey === undefined ? undefined : rng.chance(0.6);
  if (flagKey !== undefined) wire[cased(rng, flagKey)] = flag;
  const listKey = rng.pick(['data', 'value', undefined]);
  const listKind = rng.pick(['array', 'null', 'object', 'text'] as const);
  const uuids = Array.from({ length: rng.int(0, 3) }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);
  if (listKey !== undefined) {
    wire[cased(rng, listKey)] =
      listKind === 'array'
        ? uuids.map((uuid) => ({ uuid, title: 'Tip pick-up failed' }))
        : listKind === 'null'
          ? null
          : listKind === 'object'
            ? { uuid: uuids[0] ?? 'x' }
            : 'none';
  }
  if (rng.chance(0.5)) wire[cased(rng, 'message')] = rng.pick([null, '', 'Not allowed now']);
  if (rng.chance(0.3)) wire[cased(rng, 'hasValue')] = listKey !== undefined && listKind === 'array';
  let expected: Expected;
  if (flag === false) expected = { kind: 'refused' };
  // an empty list is "none" only where the wrapper says success (review100)
  else if (listKey !== undefined && listKind === 'array' && (uuids.length > 0 || flag === true))
    expected = { kind: 'list', uuids };
  else if (flag === true && (listKey === undefined || listKind === 'null')) expected = { kind: 'list', uuids: [] };
  else expected = { kind: 'unreadable' };
  return { wire, expected, flag };
}

/** The flag as drawn (any letter case of success or succeeded). */
function flagOf(wire: Record<string, unknown>): boolean | undefined {
  const key = Object.keys(wire).find((k) => ['success', 'succeeded'].includes(k.toLowerCase()));
  return key === undefined ? undefined : (wire[key] as boolean);
}

describe('review: a B result wrapper is never read as "no errors" unless it says so', function () {
  it(`unhandled errors and submissions over drawn wrappers (seed ${SEED}, ${CASES} cases)`, async function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const { wire, expected, flag } = draw(rng);
      const label = `seed ${SEED} case ${c}: ${JSON.stringify(wire)}`;
      let got: Expected;
      try {
        got = { kind: 'list', uuids: (await answering(wire).unhandledErrors()).map((e) => e.uuid) };
      } catch (err) {
        assert.ok(err instanceof LhError, label);
        got = err.kind === 'instrument' ? { kind: 'refused' } : { kind: 'unreadable' };
        assert.match(err.message, /^unhandled-errors: /, label);
        if (got.kind === 'unreadable') assert.equal(err.kind, 'response', label);
      }
      assert.deepEqual(got, expected, label);
      const accepted = await answering(wire)
        .submit('recovery', RECOVERY)
        .then(
          () => true,
          (err: unknown) => {
            assert.ok(err instanceof LhError && err.kind === 'instrument', label);
            return false;
          },
        );
      assert.equal(accepted, flag === true, `submission: ${label}`);
    }
  });

  it(`a registration a wrapper refuses is refused, never reported done (seed ${SEED}, ${CASES} cases)`, async function () {
    const rng = new Rng(SEED + 1);
    for (let c = 0; c < CASES; c++) {
      const wire: unknown = rng.chance(0.2) ? rng.pick(['Error handler registration successful', '']) : draw(rng).wire;
      const flag = typeof wire === 'string' ? true : flagOf(wire as Record<string, unknown>);
      // a wrapper saying neither success nor failure is done only when it carries a text (review100)
      const carried =
        typeof wire === 'object' && wire !== null && Object.values(wire).some((t) => typeof t === 'string' && t === 'none');
      const expected = flag === false ? 'instrument' : flag === true || carried ? 'done' : 'response';
      const label = `seed ${SEED} case ${c}: ${JSON.stringify(wire)}`;
      for (const op of ['register', 'unregister'] as const) {
        const api = answering(wire);
        const done = await (op === 'register' ? api.registerErrorHandler('nodered') : api.unregisterErrorHandler('nodered')).then(
          (text) => (typeof text === 'string' && text !== '' ? 'done' : 'empty'),
          (err: unknown) => (err instanceof LhError ? err.kind : 'other'),
        );
        assert.equal(done, expected, `${op}: ${label}`);
      }
    }
  });

  it(`the registration check reads the boolean a wrapper carries, and its refusal (seed ${SEED}, ${CASES} cases)`, async function () {
    const rng = new Rng(SEED + 2);
    for (let c = 0; c < CASES; c++) {
      const registered = rng.chance(0.5);
      const flagKey = rng.pick(['success', 'succeeded', undefined]);
      const flag = flagKey === undefined ? undefined : rng.chance(0.7);
      const listKey = rng.pick(['data', 'value']);
      const bare = rng.chance(0.3);
      const wire: unknown = bare
        ? rng.pick([registered, String(registered)])
        : {
            ...(flagKey !== undefined ? { [flagKey]: flag } : {}),
            [listKey]: rng.pick([registered, String(registered)]),
            message: rng.pick([null, 'Not allowed now']),
          };
      const label = `seed ${SEED} case ${c}: ${JSON.stringify(wire)}`;
      const got = await answering(wire)
        .isErrorHandlerRegistered()
        .then(
          (answer) => String(answer),
          (err: unknown) => (err instanceof LhError ? err.kind : 'other'),
        );
      const expected = bare || flag === true ? String(registered) : flag === false ? 'instrument' : 'response';
      assert.equal(got, expected, label);
    }
  });

  it("a refusal carries the instrument's message", async function () {
    await assert.rejects(
      answering({ succeeded: false, message: 'No error handler registered', hasValue: false, value: null }).unhandledErrors(),
      (err: unknown) => err instanceof LhError && err.kind === 'instrument' && /No error handler registered/.test(err.message),
    );
  });
});
