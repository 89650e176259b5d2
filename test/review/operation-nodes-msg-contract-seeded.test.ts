/**
 * Review (review66): the msg contract of the operation nodes of interfaces A and B besides answering (lh-steps,
 * lh-settings, lh-service-routine, lh-run, lh-run-data, lh-instrument, lh-clear-errors, lh-register-handler,
 * lh-error-log, lh-protocol), as a seeded property in a real Node-RED against the simulator.
 *
 * A drawn bad msg (wrong types, null, arrays for objects, NaN/Infinity, huge texts and arrays, deep nesting,
 * `__proto__`/`constructor` keys, controls and lone surrogates in names and keys; a value set by the node's typed
 * input: msg, flow, global, env or JSONata, that resolves to a bad one, or a JSONata expression that fails) gets
 * exactly one msg at the Catch node, naming the field (msg._error.field), with one short line of message that names
 * it too (no control character, no lone surrogate, bounded); nothing on the output; no request at the simulator.
 * A drawn good msg gets one output: msg.payload as the README says, msg.statusCode 200, every other msg property and
 * msg._msgid kept, nothing at Catch.
 *
 * Property (seeded PRNG, the seed printed; LH_SEED=<n> replays it, LH_CASES=<n> draws more cases per node).
 */
import assert from 'node:assert/strict';

import { shownInLog } from '../../src/observe/whole-characters';
import type { Simulator } from '../../src/simulator';
import { builtNode, useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, serverFlow, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 4;

/** How a node's setting gets its value. */
type Source = 'msg' | 'msg-path' | 'flow' | 'global' | 'env' | 'jsonata' | 'jsonata-fails' | 'template' | 'template-fails';
const SOURCES: readonly Source[] = [
  'msg',
  'msg-path',
  'flow',
  'global',
  'env',
  'jsonata',
  'jsonata-fails',
  'template',
  'template-fails',
];
/** Sources that give the drawn value (not one that fails of itself). */
const GIVING = SOURCES.filter((x) => !x.endsWith('-fails'));

/** A typed-input setting of a node, with the operation that uses it. */
interface Setting {
  node: string;
  field: string;
  /** the field a refusal names, when not `field` itself (a colour's channel) */
  names?: RegExp;
  config: Msg;
  /** values the setting refuses (whatever the source) */
  bad: (rng: Rng) => unknown;
  /** a value it takes, and what the output then shows */
  good?: (rng: Rng, sim: Simulator) => { value: unknown; check: (out: Msg) => void };
}

const ENV_NAME = 'LH_REVIEW66_VALUE';

function deep(levels: number, leaf: unknown = 1): unknown {
  let d: unknown = leaf;
  for (let i = 0; i < levels; i++) d = { a: d };
  return d;
}

/** Texts a name or key may hold that no message should show raw: controls, bidi overrides, lone surrogates, huge. */
function hostileText(rng: Rng): string {
  return rng.pick([
    'x\n[error] forged line',
    'a\r\nb',
    '\u0000\u0007\u001b[31mred',
    '\u202eevil',
    'lone \ud800 half',
    '\udc00',
    'x'.repeat(rng.int(5_000, 200_000)),
    `${'é'.repeat(50)}\n${'\ud83d\ude00'.repeat(40)}`,
  ]);
}

/** A value that is no database id / whole number of any range. */
function badNumber(rng: Rng): unknown {
  return rng.pick<unknown>([
    NaN,
    Infinity,
    -Infinity,
    1.5,
    2 ** 31,
    -(2 ** 40),
    '1e3',
    'abc',
    '0x10',
    '1'.repeat(rng.int(20, 400)),
    [],
    [1],
    {},
    { id: 1 },
    true,
    hostileText(rng),
  ]);
}

function badNonNegative(rng: Rng): unknown {
  return rng.chance(0.3) ? rng.pick([-1, '-1', -2147483648]) : badNumber(rng);
}

function badPositive(rng: Rng): unknown {
  return rng.chance(0.3) ? rng.pick([0, -0, '0', -1]) : badNumber(rng);
}

const SETTINGS: Setting[] = [
  {
    node: 'lh-steps',
    field: 'protocolId',
    config: { operation: 'list' },
    bad: badNonNegative,
    good: (rng) => ({
      value: rng.pick<unknown>([1, '1', ' 1 ']),
      check: (out) => assert.ok(Array.isArray(out.payload) && out.payload.length > 0, 'the steps of protocol 1'),
    }),
  },
  {
    node: 'lh-steps',
    field: 'stepId',
    config: { operation: 'get', protocolId: '1', protocolIdType: 'num' },
    bad: badNonNegative,
    good: (rng, sim) => {
      const ids = (sim.state.protocols.get(1)?.steps ?? []).map((s) => s.id);
      const id = rng.pick(ids);
      return { value: rng.chance(0.5) ? id : String(id), check: (out) => assert.equal((out.payload as Msg).id, id) };
    },
  },
  {
    node: 'lh-steps',
    field: 'offset',
    config: { operation: 'list', protocolId: '1', protocolIdType: 'num' },
    bad: badNonNegative,
  },
  {
    node: 'lh-steps',
    field: 'limit',
    config: { operation: 'list', protocolId: '1', protocolIdType: 'num' },
    bad: badPositive,
    good: (rng) => {
      const limit = rng.int(1, 2);
      return { value: limit, check: (out) => assert.equal((out.payload as unknown[]).length, limit) };
    },
  },
  {
    node: 'lh-service-routine',
    field: 'routineId',
    config: { operation: 'get' },
    bad: badNonNegative,
    good: (rng) => {
      const id = rng.int(1, 4);
      return { value: rng.chance(0.5) ? id : String(id), check: (out) => assert.equal((out.payload as Msg).id, id) };
    },
  },
  { node: 'lh-run', field: 'protocolId', config: { operation: 'validate' }, bad: badNonNegative },
  {
    node: 'lh-run-data',
    field: 'runId',
    config: { operation: 'get' },
    bad: (rng) => rng.pick<unknown>(['..', '.', 'a/b', 'a b', '%2e%2e', -1, 1.5, NaN, [], {}, true, hostileText(rng)]),
  },
  {
    node: 'lh-instrument',
    field: 'temperature',
    config: { operation: 'heater-start' },
    bad: (rng) => rng.pick<unknown>([-1, 106, 36.6, '36.6', NaN, Infinity, [], {}, true, hostileText(rng)]),
    good: (rng) => {
      const t = rng.int(4, 105); // the simulator's range (the client's starts at 0)
      return { value: t, check: (out) => assert.deepEqual(out.payload, { targetTemperature: t }) };
    },
  },
  {
    node: 'lh-instrument',
    field: 'position',
    config: { operation: 'deck-scan' },
    bad: (rng) => rng.pick<unknown>([0, 1000, 1.5, '1.5', NaN, -Infinity, [], {}, true, hostileText(rng)]),
  },
  {
    node: 'lh-instrument',
    field: 'colour',
    names: /^colour(\.(red|green|blue|white))?$/,
    config: { operation: 'lights-custom' },
    bad: (rng) =>
      rng.pick<unknown>(['#12345', 'red', 5, [], true, hostileText(rng), { red: 1, green: 2 }, { red: 256, green: 0, blue: 0 }]),
    good: (rng) => {
      const c = { red: rng.int(0, 255), green: rng.int(0, 255), blue: rng.int(0, 255), white: rng.int(0, 255) };
      return { value: c, check: (out) => assert.deepEqual(out.payload, c) };
    },
  },
  {
    node: 'lh-instrument',
    field: 'sources',
    config: { operation: 'traces' },
    bad: (rng) => rng.pick<unknown>(['a b', 'x'.repeat(33), 5, [], {}, true, hostileText(rng)]),
  },
  {
    node: 'lh-instrument',
    field: 'limit',
    config: { operation: 'traces' },
    bad: (rng) => rng.pick<unknown>([1001, 0, badNumber(rng)]),
  },
  {
    node: 'lh-register-handler',
    field: 'clientKey',
    config: { operation: 'register' },
    bad: (rng) => rng.pick<unknown>(['a b', 'ab-c', 'x'.repeat(129), 5, [], {}, true, hostileText(rng)]),
  },
  {
    node: 'lh-error-log',
    field: 'errorId',
    config: { operation: 'get' },
    bad: (rng) => rng.pick<unknown>(['..', 'a/b', 'x'.repeat(201), 1.5, NaN, [], {}, true, hostileText(rng)]),
  },
  { node: 'lh-error-log', field: 'offset', config: { operation: 'list' }, bad: badNonNegative },
  {
    node: 'lh-error-log',
    field: 'limit',
    config: { operation: 'list' },
    bad: badPositive,
    good: (rng) => {
      const limit = rng.int(1, 50);
      return { value: limit, check: (out) => assert.ok(v(out.payload).items !== undefined, 'a page of the history') };
    },
  },
  { node: 'lh-protocol', field: 'protocolId', config: { operation: 'validate' }, bad: badNonNegative },
];

function v(x: unknown): Msg {
  return x as Msg;
}

/** A bad msg to a node whose settings all come from the msg: its config, the msg, and the field the refusal names. */
interface BodyCase {
  node: string;
  config: Msg;
  msg: Msg;
  field: string | RegExp;
  what: string;
}

const STEP = { stepType: 'PauseStep', name: 'Pause' };

/** The classes of bad bodies and msg flags, drawn one per call. */
const BODY_CASES: ((rng: Rng) => BodyCase)[] = [
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'create', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: rng.pick<unknown>([null, [], [STEP], 'step', 5, true]) },
    field: 'payload',
    what: 'a create body that is no object',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'create', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: { ...STEP, stepType: rng.pick<unknown>(['Steps', 'PauseStepStep', 'Nope', 5, null, [], hostileText(rng)]) } },
    field: 'payload.stepType',
    what: 'a step type that is none',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'create', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: { ...STEP, name: rng.pick<unknown>(['', '  ', 5, [], {}, 'x'.repeat(rng.int(1001, 100_000))]) } },
    field: 'payload.name',
    what: 'a step name that is no text, or too long',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'create', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: { ...STEP, duration: rng.pick([NaN, Infinity, -Infinity]) } },
    field: 'payload.duration',
    what: 'a number JSON would send as null',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'create', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: { ...STEP, extra: deep(rng.int(65, 3000)) } },
    field: /^payload\.extra(\.a)+$/,
    what: 'a body nested too deep',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'update', protocolId: '1', protocolIdType: 'num' },
    msg: {
      payload: rng.chance(0.5)
        ? (JSON.parse('{"id":1,"stepType":"PauseStep","__proto__":{"polluted":true}}') as Msg)
        : { id: 1, ...STEP, data: { constructor: { x: 1 } } },
    },
    field: /^payload\.(__proto__|data\.constructor)$/,
    what: 'a prototype key in the body',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'create', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: { ...STEP, [hostileText(rng)]: NaN } },
    field: /^payload\./,
    what: 'a key with controls, a lone surrogate or huge, holding NaN',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'create', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: { ...STEP, values: new Array(rng.int(1_100_000, 1_300_000)).fill(0) } },
    field: 'payload',
    what: 'a body of more values than its size limit holds',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'create', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: STEP, makeNameUnique: rng.pick<unknown>(['yes', 'true', 1, [], {}]) },
    field: 'makeNameUnique',
    what: 'a flag that is no boolean',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'reorder', protocolId: '1', protocolIdType: 'num' },
    msg: { payload: rng.pick<unknown>([[], {}, 'a', [1, 1], null]) },
    field: /^payload(\[\d+\])?$/,
    what: 'a reorder that is no list of step ids',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'rename', protocolId: '1', protocolIdType: 'num', stepId: '1', stepIdType: 'num' },
    msg: { payload: rng.pick<unknown>(['', { newName: 5 }, 'x'.repeat(rng.int(1001, 50_000))]) },
    field: 'newName',
    what: 'a new name that is empty, no text or too long',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'list', protocolId: '1', protocolIdType: 'num' },
    msg: { includeFullStepData: rng.pick<unknown>(['yes', 1, [], {}]) },
    field: 'includeFullStepData',
    what: 'a choice that is no boolean',
  }),
  (rng) => ({
    node: 'lh-settings',
    config: { operation: 'set-software-settings' },
    msg: {
      payload: rng.pick<unknown>([
        { hideKeyboard: 'yes' },
        { defaultAmbientTemperature: rng.pick([NaN, 1.5, 2 ** 31, '22.5']) },
        { bogus: 1 },
        JSON.parse('{"hideKeyboard":true,"__proto__":{"x":1}}'),
        { [hostileText(rng)]: 1 },
      ]),
    },
    field: /^payload\./,
    what: 'a setting of the wrong type, unknown or a prototype key',
  }),
  (rng) => ({
    node: 'lh-settings',
    config: { operation: 'set-software-settings' },
    msg: { payload: rng.pick<unknown>([{}, [], null, 'x', 5]) },
    field: 'payload',
    what: 'settings that are no object or name none',
  }),
  (rng) => ({
    node: 'lh-settings',
    config: { operation: 'set-software-settings', mode: 'msg' },
    msg: { payload: { hideKeyboard: true }, mode: rng.pick<unknown>(['Merge', 'all', 5, [], {}, true]) },
    field: 'mode',
    what: 'a mode that is none',
  }),
  (rng) => ({
    node: 'lh-service-routine',
    config: { operation: 'update' },
    msg: {
      routineId: 1,
      payload: rng.pick<unknown>([
        { isRecommended: 'yes' },
        { lastRun: 'yesterday' },
        { name: 5 },
        { bogus: 1 },
        { [hostileText(rng)]: 1 },
      ]),
    },
    field: /^payload\./,
    what: 'a routine field of the wrong type or unknown',
  }),
  (rng) => ({
    node: 'lh-service-routine',
    config: { operation: 'update' },
    msg: { routineId: 1, payload: { name: 'x'.repeat(rng.int(1001, 900_000)) } },
    field: 'payload.name',
    what: 'a routine name of any length',
  }),
  (rng) => ({
    node: 'lh-service-routine',
    config: { operation: 'update' },
    msg: { routineId: 1, payload: { isRecommended: true }, markRunNow: rng.pick<unknown>(['yes', 1, [], {}]) },
    field: 'markRunNow',
    what: 'a flag that is no boolean',
  }),
  (rng) => ({
    node: 'lh-run',
    config: { operation: 'validate' },
    msg: { protocolName: rng.pick<unknown>([5, [], {}, true]) },
    field: 'protocolName',
    what: 'a protocol name that is no text',
  }),
  (rng) => ({
    node: 'lh-run',
    config: { operation: 'validate' },
    msg: {
      protocolName: rng.chance(0.5)
        ? 'x'.repeat(rng.int(1001, 200_000))
        : `Demo protocol${'\n'.repeat(rng.int(1, 3))}${'y'.repeat(2000)}`,
    },
    field: 'protocolName',
    what: 'a protocol name longer than any name',
  }),
  (rng) => ({
    node: 'lh-run',
    config: { operation: 'start', simulate: 'msg' },
    msg: { protocolId: 1, simulate: rng.pick<unknown>(['true', 1, [], {}]) },
    field: 'simulate',
    what: 'msg.simulate that is no boolean',
  }),
  (rng) => ({
    node: 'lh-run',
    config: { operation: 'start' },
    msg: { protocolId: 1, confirmLoading: rng.pick<unknown>(['true', 1, [], {}]) },
    field: 'confirmLoading',
    what: 'msg.confirmLoading that is no boolean',
  }),
  (rng) => ({
    node: 'lh-run',
    config: { operation: 'start', simulate: 'true' },
    msg: {
      protocolId: 1,
      payload: rng.pick<unknown>([
        { residualTips: 'x' },
        { barcodes: {} },
        { liquidVolumes: [1, NaN] },
        { residualTips: [deep(rng.int(65, 500))] },
        { barcodes: [JSON.parse('{"__proto__":{"x":1}}')] },
      ]),
    },
    field: /^payload\.(residualTips|barcodes|liquidVolumes)/,
    what: 'load-complete fields of a start that load-complete would refuse',
  }),
  (rng) => ({
    node: 'lh-steps',
    config: { operation: 'update', protocolId: '1', protocolIdType: 'num', stepId: '1', stepIdType: 'num' },
    msg: { payload: { ...STEP, id: rng.int(2, 1000) } },
    field: 'stepId',
    what: 'a step id in the dialog that payload.id contradicts',
  }),
  (rng) => ({
    node: 'lh-service-routine',
    config: { operation: 'update' },
    msg: { routineId: 1, payload: { id: rng.int(2, 1000), isRecommended: true } },
    field: 'routineId',
    what: 'msg.routineId that payload.id contradicts',
  }),
  (rng) => ({
    node: 'lh-instrument',
    config: { operation: 'lights-custom' },
    msg: {
      payload: rng.pick<unknown>([
        { red: 1, green: 2, blue: NaN },
        { red: 1, green: 2, blue: 3, [hostileText(rng)]: 4 },
        { red: 1, green: 2, blue: 3, Red: 4 },
        [1, 2, 3],
        null,
      ]),
    },
    field: /^payload/,
    what: 'a colour in msg.payload that is none',
  }),
  (rng) => ({
    node: 'lh-protocol',
    config: { operation: 'plan', protocolId: '1', protocolIdType: 'num' },
    msg: {
      payload: rng.pick<unknown>([null, [], 'x', 5, { steps: 'x' }, { name: 'p', steps: [{ stepType: 'Nope', name: 'a' }] }]),
    },
    field: /^payload/,
    what: 'a desired protocol that is none',
  }),
  (rng) => ({
    node: 'lh-protocol',
    config: { operation: 'apply' },
    msg: { plan: rng.pick<unknown>([undefined, null, [], 'x', 5, { kind: 'x' }, deep(rng.int(300, 3000))]) },
    field: /^plan/,
    what: 'a plan that is none',
  }),
  (rng) => ({
    node: rng.pick(['lh-steps', 'lh-settings', 'lh-service-routine', 'lh-run', 'lh-run-data', 'lh-instrument']),
    config: { operation: 'msg' },
    msg: { operation: rng.pick<unknown>([5, null, [], {}, 'nope', hostileText(rng)]) },
    field: 'operation',
    what: 'msg.operation that is none of the node',
  }),
];

/** One node of the flow under test: its id, type, config (its output goes to a helper node of its own). */
interface Placed {
  id: string;
  type: string;
  config: Msg;
}

describe('review: the msg contract of the operation nodes, as a seeded property', function () {
  const sim = useInstrument();
  this.timeout(60_000);

  const placed: Placed[] = [];
  const byKey = new Map<string, Placed>();

  /** The node of this type and config (each a node of its own in the one flow loaded). */
  function place(type: string, config: Msg): Placed {
    const key = `${type} ${JSON.stringify(config)}`;
    let p = byKey.get(key);
    if (!p) {
      p = { id: `n${placed.length}`, type, config };
      placed.push(p);
      byKey.set(key, p);
    }
    return p;
  }

  interface Store {
    set(key: string, value: unknown): void;
  }

  function contextOf(p: Placed): { flow: Store; global: Store } {
    return (helper.getNode(p.id) as unknown as { context(): { flow: Store; global: Store } }).context();
  }

  /** The config of `setting` reading its value from `source`; the msg and context the value then goes in. */
  function bySource(s: Setting, source: Source): { config: Msg; put: (value: unknown, msg: Msg, p: Placed) => void } {
    const typeKey = `${s.field}Type`;
    switch (source) {
      case 'msg':
        return { config: { ...s.config, [s.field]: '' }, put: (value, msg) => void (msg[s.field] = value) };
      case 'msg-path':
        return {
          config: { ...s.config, [s.field]: 'lh.v', [typeKey]: 'msg' },
          put: (value, msg) => void (msg.lh = { v: value }),
        };
      case 'jsonata':
        return {
          config: { ...s.config, [s.field]: 'lh.v', [typeKey]: 'jsonata' },
          put: (value, msg) => void (msg.lh = { v: value }),
        };
      case 'jsonata-fails':
        return { config: { ...s.config, [s.field]: '$number("not a number")', [typeKey]: 'jsonata' }, put: () => undefined };
      case 'template':
        return {
          config: { ...s.config, [s.field]: '{{lh.v}}', [typeKey]: 'str' },
          put: (value, msg) => void (msg.lh = { v: value }),
        };
      case 'template-fails':
        // a typo: the tag is not closed (Mustache throws "Unclosed tag")
        return {
          config: { ...s.config, [s.field]: '{{lh.v}', [typeKey]: 'str' },
          put: (value, msg) => void (msg.lh = { v: value }),
        };
      case 'flow':
        return {
          config: { ...s.config, [s.field]: 'lhValue', [typeKey]: 'flow' },
          put: (value, _msg, p) => contextOf(p).flow.set('lhValue', value),
        };
      case 'global':
        return {
          config: { ...s.config, [s.field]: 'lhValue', [typeKey]: 'global' },
          put: (value, _msg, p) => contextOf(p).global.set('lhValue', value),
        };
      case 'env':
        return {
          config: { ...s.config, [s.field]: ENV_NAME, [typeKey]: 'env' },
          put: (value) => {
            process.env[ENV_NAME] = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
          },
        };
    }
  }

  /** What JSON or an env variable can carry of a drawn value (env: text only; JSONata: values JSON holds). */
  function carried(source: Source, value: unknown): boolean {
    if (source === 'env') return typeof value === 'string' && !value.includes('\u0000');
    // a template renders text: a value is carried as its text, a text with braces or no text at all is another one
    if (source === 'template') return typeof value === 'string' && !/[{}]/.test(value) && value.trim() !== '';
    // JSONata gives a one-item array as its item, and nothing for an empty one: arrays are the msg sources' to draw
    if (source === 'jsonata') return !Array.isArray(value) && (typeof value !== 'number' || Number.isFinite(value));
    return true;
  }

  interface Drawn {
    p: Placed;
    msg: Msg;
    field: string | RegExp;
    what: string;
    put?: (p: Placed) => void;
  }

  function drawBad(rng: Rng): Drawn {
    if (rng.chance(0.5)) {
      const c = rng.pick(BODY_CASES)(rng);
      return { p: place(c.node, c.config), msg: c.msg, field: c.field, what: c.what };
    }
    const s = rng.pick(SETTINGS);
    let value = s.bad(rng);
    let source = rng.pick(SOURCES);
    for (let i = 0; i < 20 && !carried(source, value); i++) {
      value = s.bad(rng);
      source = rng.pick(SOURCES);
    }
    if (!carried(source, value)) source = 'msg';
    const how = bySource(s, source);
    const msg: Msg = {};
    let put: ((p: Placed) => void) | undefined;
    if (['msg', 'msg-path', 'jsonata', 'template', 'template-fails'].includes(source)) how.put(value, msg, undefined as never);
    else put = (p) => how.put(value, msg, p);
    return {
      p: place(s.node, how.config),
      msg,
      field: s.names ?? s.field,
      what: `${s.node} ${s.field} from ${source}: ${describe(value)}`,
      put,
    };
  }

  function describe(value: unknown): string {
    if (typeof value === 'string') return value.length > 40 ? `a text of ${value.length}` : JSON.stringify(value);
    if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
    return Array.isArray(value) ? `an array of ${value.length}` : typeof value;
  }

  /** Sends msg to the placed node: what reached its output, its Catch node, and the requests the simulator got. */
  async function send(p: Placed, msg: Msg): Promise<{ outputs: Msg[]; caught: Msg[]; requests: number }> {
    const outputs = collect(helper.getNode(`${p.id}-out`));
    const caught = collect(helper.getNode('caught'));
    const before = sim.requests.length;
    helper.getNode(p.id).receive(msg);
    const end = Date.now() + 20_000;
    while (outputs.length + caught.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    // a second msg would follow at once: give it the few turns it would take
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    helper.getNode(`${p.id}-out`).removeAllListeners('input');
    helper.getNode('caught').removeAllListeners('input');
    return { outputs, caught, requests: sim.requests.length - before };
  }

  /** On the tab with a position, as in a real flows.json (without one Node-RED takes a node for a config node). */
  const AT = { z: 'tab', x: 100, y: 100 };

  async function loadPlaced(): Promise<void> {
    const server = serverFlow(sim, { withB: true });
    const flow: Msg[] = [{ id: 'tab', type: 'tab', label: 'review66' }, ...server.nodes];
    for (const p of placed) {
      flow.push(
        { ...p.config, id: p.id, type: p.type, server: 'server', ...AT, wires: [[`${p.id}-out`]] },
        { id: `${p.id}-out`, type: 'helper', ...AT },
      );
    }
    // one Catch node for all (the test helper loads a core node's module once per node of its type)
    flow.push({ id: 'catch', type: 'catch', scope: null, ...AT, wires: [['caught']] }, { id: 'caught', type: 'helper', ...AT });
    const types = [...new Set(placed.map((p) => p.type))];
    await helper.load([tlsConfigNode, builtNode('lh-server'), ...types.map(builtNode)], flow, server.credentials);
  }

  /** Until the simulator has had no request for 100 ms (what a deploy asks for is not counted against a msg). */
  async function settled(): Promise<void> {
    let last = -1;
    while (sim.requests.length !== last) {
      last = sim.requests.length;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  afterEach(function () {
    delete process.env[ENV_NAME];
  });

  it(`a drawn bad msg: one error at Catch naming the field, nothing sent, no request (seed ${SEED})`, async function () {
    console.log(`      msg-contract seed: ${SEED} (LH_SEED=${SEED} replays it, LH_CASES=${CASES} cases per node)`);
    const rng = new Rng(SEED);
    const drawn: Drawn[] = [];
    const nodes = new Set(SETTINGS.map((s) => s.node));
    for (let i = 0; i < CASES * nodes.size; i++) drawn.push(drawBad(rng));
    await loadPlaced();
    await settled();
    const problems: string[] = [];
    for (const d of drawn) {
      d.put?.(d.p);
      const { outputs, caught, requests } = await send(d.p, d.msg);
      const label = `${d.what} (${d.p.type} ${JSON.stringify(d.p.config).slice(0, 120)})`;
      const details = caught[0]?._error as Msg | undefined;
      const message = String(details?.message ?? '');
      const field = details?.field;
      const named =
        typeof field === 'string' && (typeof d.field === 'string' ? field === d.field : d.field.test(field.slice(0, 1000)));
      const issues = [
        caught.length !== 1 && `${caught.length} msgs at Catch`,
        outputs.length !== 0 && `${outputs.length} outputs`,
        requests !== 0 &&
          `${requests} requests (${sim.requests
            .slice(-requests)
            .map((r) => `${r.method} ${r.path}`)
            .join(', ')})`,
        caught.length === 1 && !named && `field ${JSON.stringify(String(field).slice(0, 80))}, expected ${String(d.field)}`,
        caught.length === 1 && details?.kind !== 'validation' && `kind ${String(details?.kind)}`,
        message.length > 1000 && `a message of ${message.length} characters`,
        /[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(message) && `a control or lone surrogate in the message`,
        // as a person reads it: a control character or lone surrogate of a key shown as U+FFFD
        caught.length === 1 &&
          typeof field === 'string' &&
          !message.includes(shownInLog(field).slice(0, 20)) &&
          `the message does not name the field: ${JSON.stringify(message.slice(0, 120))}`,
      ].filter((x): x is string => typeof x === 'string');
      if (issues.length > 0) problems.push(`${label}: ${issues.join('; ')}; message ${JSON.stringify(message.slice(0, 160))}`);
    }
    assert.deepEqual(problems, [], `seed ${SEED}`);
  });

  it(`a drawn good msg: one output as the README says, msg properties and _msgid kept (seed ${SEED})`, async function () {
    const rng = new Rng(SEED ^ 0x5eed);
    interface Good {
      p: Placed;
      msg: Msg;
      put?: (p: Placed) => void;
      check: (out: Msg) => void;
      what: string;
    }
    const goods: Good[] = [];
    const fixed: { type: string; config: Msg; msg: () => Msg; check: (out: Msg) => void }[] = [
      {
        type: 'lh-clear-errors',
        config: {},
        msg: () => ({}),
        check: (out) =>
          assert.deepEqual(Object.keys(out.payload as Msg).sort(), ['numberOfErrorsCleared', 'numberOfErrorsNotCleared']),
      },
      {
        type: 'lh-settings',
        config: { operation: 'set-software-settings' },
        msg: () => ({ payload: { defaultAmbientTemperature: rng.int(-20, 60) } }),
        check: (out) => assert.equal(typeof (out.payload as Msg).defaultAmbientTemperature, 'number'),
      },
      {
        type: 'lh-run',
        config: { operation: 'status' },
        msg: () => ({}),
        check: (out) => assert.equal(out.state, (out.payload as Msg).protocolRunState),
      },
      {
        type: 'lh-run-data',
        config: { operation: 'list' },
        msg: () => ({}),
        check: (out) => assert.ok(Array.isArray(out.payload)),
      },
      {
        type: 'lh-register-handler',
        config: { operation: 'check' },
        msg: () => ({}),
        check: (out) => assert.equal(typeof out.payload, 'boolean'),
      },
      {
        type: 'lh-protocol',
        config: { operation: 'export', protocolId: '1', protocolIdType: 'num' },
        msg: () => ({}),
        check: (out) => assert.ok(Array.isArray((out.payload as Msg).steps)),
      },
    ];
    for (const f of fixed) {
      for (let i = 0; i < Math.max(1, CASES / 2); i++)
        goods.push({ p: place(f.type, f.config), msg: f.msg(), check: f.check, what: `${f.type} ${JSON.stringify(f.config)}` });
    }
    for (const s of SETTINGS.filter((x) => x.good)) {
      for (let i = 0; i < Math.max(1, CASES / 2); i++) {
        const { value, check } = (s.good as NonNullable<Setting['good']>)(rng, sim);
        const source = rng.pick(GIVING.filter((x) => carried(x, value)));
        const how = bySource(s, source);
        const msg: Msg = {};
        const direct = ['msg', 'msg-path', 'jsonata', 'template'].includes(source);
        if (direct) how.put(value, msg, undefined as never);
        goods.push({
          p: place(s.node, how.config),
          msg,
          put: direct ? undefined : (p) => how.put(value, msg, p),
          check,
          what: `${s.node} ${s.field} from ${source}: ${describe(value)}`,
        });
      }
    }
    await loadPlaced();
    const problems: string[] = [];
    for (const g of goods) {
      g.put?.(g.p);
      const kept = { topic: `t${rng.int(0, 999)}`, _msgid: `id${rng.int(0, 1e6)}`, keep: { a: [rng.int(0, 9)], b: 'é\u00e9' } };
      const { outputs, caught } = await send(g.p, { ...g.msg, ...kept });
      const out = outputs[0];
      const issues: string[] = [];
      if (caught.length !== 0)
        issues.push(`${caught.length} at Catch: ${String((caught[0]._error as Msg | undefined)?.message).slice(0, 200)}`);
      if (outputs.length !== 1) issues.push(`${outputs.length} outputs`);
      if (out) {
        if (out.statusCode !== 200) issues.push(`statusCode ${String(out.statusCode)}`);
        for (const [k, val] of Object.entries(kept)) {
          try {
            assert.deepEqual(out[k], val);
          } catch {
            issues.push(`msg.${k} not kept: ${JSON.stringify(out[k])}`);
          }
        }
        try {
          g.check(out);
        } catch (err) {
          issues.push((err as Error).message);
        }
      }
      if (issues.length > 0) problems.push(`${g.what}: ${issues.join('; ')}`);
      delete process.env[ENV_NAME];
    }
    assert.deepEqual(problems, [], `seed ${SEED}`);
  });
});
