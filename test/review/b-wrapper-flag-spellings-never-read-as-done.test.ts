/**
 * Review (observed-instrument.md, B: "other operations of the same API return wrappers like {succeeded, message,
 * hasValue, value} or {result, message}"; interfaces.md 2.9: `success` boolean). The B readers took `success` or
 * `succeeded` as a JSON boolean only, and `success` alone when both were given:
 * - a registration answered `{result: false, message: "…"}` (the third wrapper of the same API), a bare `false`,
 *   `{success: "false"}`, or `{success: true, succeeded: false}` was reported "registered": a refusal reported done
 *   (and every submission after it refused for an unregistered key);
 * - unhandled errors answered `{success: "False", data: []}` or `{result: false, data: []}` or `{data: []}` read as
 *   "no unhandled errors": an instrument that did not say success reported as one without errors.
 *
 * Model-based property over drawn answers (seeded: LH_SEED replays, LH_CASES draws more): each of the flags success,
 * succeeded, result absent, true, false, their texts in any case, or something else (null, 0, 1, "yes"); the list
 * (data, value or result) an array of 0–2 errors, null, an object or a text; a message text, empty, null or a number;
 * or a bare answer. For unhandled, submit, register, unregister and check, the outcome is the model's: any flag false
 * is the instrument's refusal naming the operation; "no errors" and "done" only where a flag says true (or a text
 * says so, as interfaces.md gives it); anything else unreadable, naming the operation.
 */
import assert from 'node:assert/strict';

import { LhError } from '../../src/client/errors';
import { answering, RECOVERY } from '../support/b-answers';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 300;

const FLAG_VALUES: unknown[] = [true, false, 'true', 'false', 'False', 'TRUE', ' false ', null, 0, 1, 'yes'];

/** What a flag value says: true, false, or nothing. */
function said(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && ['true', 'false'].includes(value.trim().toLowerCase()))
    return value.trim().toLowerCase() === 'true';
  return undefined;
}

function drawWrapper(rng: Rng): Record<string, unknown> {
  const w: Record<string, unknown> = {};
  for (const name of ['success', 'succeeded', 'result']) if (rng.chance(0.4)) w[name] = rng.pick(FLAG_VALUES);
  const listKey = rng.pick(['data', 'value', 'result', undefined]);
  if (listKey !== undefined && rng.chance(0.7)) {
    const n = rng.int(0, 2);
    w[listKey] = rng.pick([
      Array.from({ length: n }, (_, i) => ({ uuid: `00000000-0000-4000-8000-00000000000${i}`, title: 'Tip pick-up failed' })),
      null,
      { uuid: 'x' },
      'Registration successful',
      true,
      false,
    ]);
  }
  if (rng.chance(0.6)) w.message = rng.pick([null, '', 'Not allowed now', 42]);
  return w;
}

function flags(w: Record<string, unknown>, names: string[]): boolean | undefined {
  const values = names.map((n) => said(w[n]));
  if (values.includes(false)) return false;
  return values.includes(true) ? true : undefined;
}

type Outcome = string; // 'refused' | 'unreadable' | 'list:n' | 'done' | 'true' | 'false'

function expectUnhandled(w: Record<string, unknown>): Outcome {
  const ok = flags(w, ['success', 'succeeded', 'result']);
  if (ok === false) return 'refused';
  const list = w.data !== undefined && w.data !== null ? w.data : (w.value ?? (Array.isArray(w.result) ? w.result : undefined));
  if (Array.isArray(list) && (list.length > 0 || ok === true)) return `list:${list.length}`;
  if ((list === undefined || list === null) && ok === true) return 'list:0';
  return 'unreadable';
}

function expectRegister(wire: unknown): Outcome {
  if (typeof wire === 'string' || wire === null || wire === true) return 'done';
  if (wire === false) return 'refused';
  if (typeof wire !== 'object' || Array.isArray(wire)) return 'unreadable';
  const w = wire as Record<string, unknown>;
  const ok = flags(w, ['success', 'succeeded', 'result']);
  if (ok === false) return 'refused';
  if (ok === true) return 'done';
  return [w.data, w.value, w.result].some((t) => typeof t === 'string' && t.trim() !== '') ? 'done' : 'unreadable';
}

function expectCheck(wire: unknown): Outcome {
  const bare = said(wire);
  if (bare !== undefined) return String(bare);
  if (typeof wire !== 'object' || wire === null || Array.isArray(wire)) return 'unreadable';
  const w = wire as Record<string, unknown>;
  const ok = flags(w, ['success', 'succeeded']);
  if (ok === false) return 'refused';
  const carried = ok === true ? said(w.data ?? w.value ?? w.result) : undefined;
  return carried === undefined ? 'unreadable' : String(carried);
}

/** The outcome of `call`, checking that a failure names the operation and is of the kind its outcome says. */
async function outcomeOf(call: () => Promise<unknown>, op: RegExp, label: string): Promise<Outcome> {
  try {
    const value = await call();
    if (Array.isArray(value)) return `list:${value.length}`;
    if (typeof value === 'boolean') return String(value);
    assert.ok(typeof value === 'string' || (typeof value === 'object' && value !== null), label);
    if (typeof value === 'string') assert.notEqual(value, '', label);
    return 'done';
  } catch (err) {
    assert.ok(err instanceof LhError, `${label}: ${String(err)}`);
    assert.match(err.message, op, label);
    assert.doesNotMatch(err.message, /\[object Object\]/, label);
    if (err.kind === 'instrument') return 'refused';
    assert.equal(err.kind, 'response', label);
    return 'unreadable';
  }
}

describe('review: B wrapper flags in every spelling: a refusal is never done, "no errors" only when said', function () {
  it(`unhandled, submit, register, unregister and check over drawn answers (seed ${SEED}, ${CASES} cases)`, async function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const bare = rng.chance(0.15);
      const wire: unknown = bare ? rng.pick<unknown>([...FLAG_VALUES, 'Error handler registered', '', [], 7]) : drawWrapper(rng);
      const label = `seed ${SEED} case ${c}: ${JSON.stringify(wire)}`;
      if (!bare) {
        const w = wire as Record<string, unknown>;
        const api = answering(wire);
        assert.equal(
          await outcomeOf(() => api.unhandledErrors(), /^unhandled-errors/, label),
          expectUnhandled(w),
          `unhandled: ${label}`,
        );
        const accepted = flags(w, ['success', 'succeeded', 'result']) === true ? 'done' : 'refused';
        assert.equal(
          await outcomeOf(() => answering(wire).submit('recovery', RECOVERY), /^submit-recovery/, label),
          accepted,
          `submit: ${label}`,
        );
      }
      const register = expectRegister(wire);
      assert.equal(
        await outcomeOf(() => answering(wire).registerErrorHandler('nodered'), /^register-error-handler/, label),
        register,
        `register: ${label}`,
      );
      assert.equal(
        await outcomeOf(() => answering(wire).unregisterErrorHandler('nodered'), /^unregister-error-handler/, label),
        register,
        `unregister: ${label}`,
      );
      assert.equal(
        await outcomeOf(() => answering(wire).isErrorHandlerRegistered(), /^check-error-handler/, label),
        expectCheck(wire),
        `check: ${label}`,
      );
    }
  });

  it('the cases that were read as done or as "no errors"', async function () {
    const refusedRegistration = [
      { result: false, message: 'Key already registered by another client' },
      false,
      { success: 'false', message: null },
      { success: true, succeeded: false, message: 'Registration failed' },
    ];
    for (const wire of refusedRegistration) {
      await assert.rejects(answering(wire).registerErrorHandler('nodered'), (err: unknown) => {
        assert.ok(err instanceof LhError && err.kind === 'instrument', JSON.stringify(wire));
        assert.match(err.message, /^register-error-handler was refused: /);
        return true;
      });
    }
    for (const wire of [{ success: 'False', data: [] }, { result: false, data: [] }, { data: [] }, { value: [] }]) {
      await assert.rejects(
        answering(wire).unhandledErrors(),
        /^LhError: unhandled-errors: |unhandled-errors: /,
        JSON.stringify(wire),
      );
    }
    await assert.rejects(
      answering({ success: false, message: { detail: 'locked' } }).submit('recovery', RECOVERY),
      (err: unknown) => err instanceof LhError && /was refused: no reason given$/.test(err.message),
    );
  });
});
