/**
 * The export format of lh-protocol (export-format.ts): byte-identical text for the same protocol whatever order the
 * instrument sends keys and steps in, no ids or stepOrder, one digest per protocol; a desired protocol or a plan with
 * bad input is refused naming the step and the field.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError } from '../../src/client';
import { exportDigest, exportText, readDesired, readInstrumentProtocol } from '../../src/nodes/lh-protocol/export-format';
import { readPlan } from '../../src/nodes/lh-protocol/plan';
import { planChanges } from '../../src/nodes/lh-protocol/plan-make';
import { replayChanges } from '../../src/nodes/lh-protocol/plan-replay';
import { planned } from '../support/protocol-plan';
import { fieldsFor, protocolSpecs, stepOf } from './protocol-arbitraries';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

/** Keys in a shuffled order, nested objects too (as another server, or a later version, might send them). */
function shuffledKeys(value: unknown, flip: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffledKeys(v, flip));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([k, v]) => [k, shuffledKeys(v, flip)] as const);
  return Object.fromEntries(flip ? entries.reverse() : entries.sort(() => 0));
}

function refused(work: () => unknown, field: RegExp): void {
  assert.throws(work, (err: unknown) => {
    assert.ok(err instanceof LhError, String(err));
    assert.equal(err.kind, 'validation');
    assert.match(`${err.field ?? ''} ${err.message}`, field);
    return true;
  });
}

describe('lh-protocol export format', () => {
  before(() => console.log(`      protocol-export seed: ${SEED}`));

  it('is byte-identical for the same protocol, whatever the key order, PascalCase common keys and step order of the answer', () => {
    fc.assert(
      fc.property(protocolSpecs(0, 12), fc.boolean(), fc.boolean(), (specs, flip, pascal) => {
        const raw = specs.map((s, i) => ({
          id: 100 + i,
          stepOrder: i + 1,
          stepType: s.stepType,
          name: s.name,
          disabled: s.disabled,
          ...fieldsFor(s.stepType, s.k),
        }));
        const a = readInstrumentProtocol({ protocolId: 1, name: 'P', steps: raw }, 't');
        const sent = [...raw].reverse().map((step) => {
          const shuffled = shuffledKeys(step, flip) as Record<string, unknown>;
          if (!pascal) return shuffled;
          const { name, stepType, id, stepOrder, ...rest } = shuffled;
          return { Name: name, StepType: stepType, Id: id, StepOrder: stepOrder, ...rest };
        });
        const b = readInstrumentProtocol({ Name: 'P', Steps: sent, isValid: true }, 't');
        assert.equal(JSON.stringify(b.export, null, 2), JSON.stringify(a.export, null, 2));
        assert.equal(exportDigest(b.export), exportDigest(a.export));
        assert.deepEqual(
          b.steps.map((s) => s.id),
          raw.map((s) => s.id),
        );
        for (const step of a.export.steps) {
          assert.deepEqual(Object.keys(step).slice(0, 3), ['name', 'stepType', 'disabled']);
          assert.ok(!('id' in step) && !('stepOrder' in step));
        }
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('exports a step type the instrument spells without its suffix in the specification spelling, so a plan converges', () => {
    const read = readInstrumentProtocol(
      { name: 'P', steps: [{ id: 1, stepType: 'transferSamples', name: 'T', disabled: false }] },
      't',
    );
    assert.equal(read.export.steps[0].stepType, 'TransferSamplesStep');
    const desired = readDesired({ steps: [{ name: 'T', stepType: 'TransferSamples' }] }, 't');
    assert.deepEqual(planChanges(read.export, desired).changes, []);
    const unknown = readInstrumentProtocol({ name: 'P', steps: [{ id: 1, stepType: 'FutureStep', name: 'F' }] }, 't');
    assert.equal(unknown.export.steps[0].stepType, 'FutureStep');
  });

  it('gives another digest for any change of the protocol', () => {
    const p = { name: 'P', steps: [stepOf({ name: 'A', stepType: 'PauseStep', disabled: false, k: 0 })] };
    const base = exportDigest(p);
    assert.match(base, /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(exportDigest({ ...p, steps: [{ ...p.steps[0], disabled: true }] }), base);
    assert.notEqual(exportDigest({ ...p, steps: [{ ...p.steps[0], duration: 11 }] }), base);
    assert.notEqual(exportDigest({ ...p, name: 'Q' }), base);
    assert.equal(exportText(p), exportText(JSON.parse(exportText(p)) as typeof p));
  });

  it('refuses bad desired steps naming the step and the field, before anything is sent', () => {
    const ok = { name: 'A', stepType: 'PauseStep', duration: 5 };
    refused(() => readDesired({ steps: [{ ...ok, stepType: 'FlyStep' }] }, 't'), /steps\[0\] "A"\.stepType.*AddReagentStep/);
    refused(() => readDesired({ steps: [ok, { ...ok }] }, 't'), /steps\[1\] "A"\.name.*repeats/);
    refused(
      () => readDesired({ steps: [{ ...ok, duration: '5' }] }, 't'),
      /steps\[0\] "A"\.duration must be a number for a PauseStep/,
    );
    refused(() => readDesired({ steps: [{ ...ok, disabled: 'no' }] }, 't'), /\.disabled/);
    refused(() => readDesired({ steps: [{ ...ok, id: 3 }] }, 't'), /\.id is not part of the export format/);
    refused(() => readDesired({ steps: [{ ...ok, Name: 'B' }] }, 't'), /\.Name is a common field/);
    refused(() => readDesired({ steps: [{ ...ok, name: '' }] }, 't'), /steps\[0\]\.name/);
    refused(
      () => readDesired({ steps: [{ ...ok, channelSelection: 'NineChannel', stepType: 'TransferSamplesStep' }] }, 't'),
      /channelSelection must be one of/,
    );
    refused(() => readDesired({ steps: [{ ...ok, when: new Date() }] }, 't'), /\.when must be a JSON value/);
    refused(() => readDesired({ steps: [{ ...ok, x: Number.NaN }] }, 't'), /\.x must be a finite number/);
    refused(
      () => readDesired({ steps: [ok, { ...ok, name: 'B', renamedFrom: 'Z' }, { ...ok, name: 'C', renamedFrom: 'Z' }] }, 't'),
      /steps\[2\] "C"\.renamedFrom/,
    );
    refused(() => readDesired({ steps: 'x' }, 't'), /payload\.steps/);
    refused(() => readDesired([], 't'), /payload/);
    // a step type without its Step suffix is the same type (the instrument's spelling is kept in the export)
    assert.equal(readDesired({ steps: [{ ...ok, stepType: 'pause' }] }, 't')[0].stepType, 'PauseStep');
  });

  it('refuses a key named __proto__, constructor or prototype at any depth (the client would refuse its write), polluting nothing', () => {
    for (const [text, field] of [
      [
        '{"name":"A","stepType":"LidStep","__proto__":{"polluted":true}}',
        /steps\[0\] "A"\.__proto__ is a key no write may carry/,
      ],
      ['{"name":"A","stepType":"LidStep","setting":{"deep":[{"constructor":1}]}}', /"A"\.setting\.deep\[0\]\.constructor/],
      ['{"name":"A","stepType":"LidStep","prototype":null}', /"A"\.prototype/],
    ] as const) {
      refused(() => readDesired(JSON.parse(`{"steps":[${text}]}`), 't'), field);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('refuses a plan altered in transit, naming the field', () => {
    const current = { name: 'P', steps: [stepOf({ name: 'A', stepType: 'PauseStep', disabled: false, k: 0 })] };
    const desired = readDesired({ steps: [{ ...current.steps[0], name: 'B', renamedFrom: 'A' }] }, 't');
    const { plan } = planned(current, desired, { protocolId: 2, instrument: 'http://x', id: 'p1' });
    assert.deepEqual(readPlan(JSON.parse(JSON.stringify(plan)), 't'), plan);
    refused(() => readPlan({ ...plan, base: 'abc' }, 't'), /plan\.base/);
    refused(() => readPlan({ ...plan, protocolId: -1 }, 't'), /plan\.protocolId/);
    refused(() => readPlan({ ...plan, changes: [{ action: 'explode', name: 'A' }] }, 't'), /plan\.changes\[0\]\.action/);
    refused(
      () => readPlan({ ...plan, changes: [{ action: 'move', name: 'A', stepOrder: 0 }] }, 't'),
      /plan\.changes\[0\]\.stepOrder/,
    );
    refused(
      () =>
        readPlan(
          { ...plan, changes: [{ action: 'create', name: 'X', stepOrder: 1, step: { name: 'Y', stepType: 'LidStep' } }] },
          't',
        ),
      /step\.name/,
    );
    refused(() => replayChanges(current, [{ action: 'delete', name: 'Nope' }], 't'), /does not have/);
    refused(
      () =>
        replayChanges(
          current,
          [
            { action: 'delete', name: 'A' },
            { action: 'enable', name: 'A' },
          ],
          't',
        ),
      /which the plan deletes/,
    );
  });
});
