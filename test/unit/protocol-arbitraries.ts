/**
 * Generated protocols for the protocols-as-code tests: a current protocol (every step type, own fields as public
 * clients show them, unique names) and a desired one derived from it (steps kept, deleted, renamed with or without
 * renamedFrom, fields changed, enabled or disabled, new steps, any order).
 */
import fc from 'fast-check';

import { STEP_TYPES } from '../../src/contract/instrument-contract';
import { canonicalStep, type DesiredStep, type ExportStep } from '../../src/nodes/lh-protocol/export-format';

/** Own fields of a step of `type`, one of a few variants chosen by `k`. */
export function fieldsFor(type: string, k: number): Record<string, unknown> {
  switch (type) {
    case 'PauseStep':
      return { duration: 10 * (k + 1), message: `Check ${k}`, pauseForSetDuration: k % 2 === 0 };
    case 'HeatShakeStep':
      return {
        platePosition: 'HeaterShaker1',
        heat: true,
        shake: k % 2 === 1,
        rpm: 500 + 100 * k,
        temperature: 30 + k,
        duration: 60,
        heatStartOptions: 'WaitForTemperature',
      };
    case 'AddReagentStep':
      return {
        destinations: [{ labware: 'Plate1', wells: k === 0 ? 'A1:H12' : `A${k}` }],
        multiDispense: k > 1,
        liquidLabwareGroupId: k,
      };
    case 'TransferSamplesStep':
      return {
        sources: [{ labware: 'Tubes', wells: 'A1' }],
        destinations: [{ labware: 'Plate1', wells: `B${k + 1}` }],
        aspirateSettings: { volume: 10 + k, flowRate: { value: 5, unit: 'uL/s' } },
        dispenseSettings: { volume: 10 + k },
        channelSelection: ['OneChannel', 'TwoChannel', 'EightChannel'][k % 3],
        tipReuseOption: 'NewTipEachTime',
      };
    default:
      return k === 0 ? {} : { setting: { level: k, label: `v${k}` }, zeta: [k, k + 1] };
  }
}

export interface StepSpec {
  name: string;
  stepType: string;
  disabled: boolean;
  k: number;
}

export function stepOf(spec: StepSpec): ExportStep {
  return canonicalStep(spec.name, spec.stepType, spec.disabled, fieldsFor(spec.stepType, spec.k));
}

const NAMES = 'ABCDEFGHIJKLMNOP'.split('').map((c) => `Step ${c}`);

/**
 * Names a person can tell apart only by looking closely, all legal and all different: letter case only, NFC and NFD
 * of one accented name, whitespace only (leading, trailing, doubled, a tab), names of exactly 200 characters (one
 * of them in surrogate pairs), and a few ordinary ones.
 */
export const ODD_NAMES = [
  'Mix',
  'mix',
  'MIX',
  'Caf\u00e9',
  'Cafe\u0301',
  'Step A',
  'Step A ',
  ' Step A',
  'Step  A',
  'Step\tA',
  'x'.repeat(200),
  `${'x'.repeat(199)}X`,
  '\u{1F9EA}'.repeat(100),
  'Incubate',
  'Wash',
  'Pause',
];

/** The name a step renamed without `renamedFrom` gets: at most the 200 characters a name may have. */
function renamed(name: string): string {
  const to = `${name} renamed`;
  return to.length <= 200 ? to : `${name.slice(0, 180)} renamed ${name.slice(-10)}`;
}

const stepSpec = (name: string): fc.Arbitrary<StepSpec> =>
  fc.record({ stepType: fc.constantFrom(...STEP_TYPES), disabled: fc.boolean(), k: fc.nat(3) }).map((r) => ({ name, ...r }));

/** A protocol of `min`..`max` steps with unique names, every step type possible. */
export function protocolSpecs(min: number, max: number, names: readonly string[] = NAMES): fc.Arbitrary<StepSpec[]> {
  return fc
    .uniqueArray(fc.constantFrom(...names), { minLength: min, maxLength: max })
    .chain((names) => fc.tuple(...names.map(stepSpec)))
    .map((steps) => [...steps]);
}

interface Fate {
  keep: boolean;
  rename: 'no' | 'with-renamedFrom' | 'without' | 'rotate';
  changeType: boolean;
  k: number;
  toggle: boolean;
  key: number;
}

const fate: fc.Arbitrary<Fate> = fc.record({
  keep: fc.boolean(),
  rename: fc.constantFrom('no', 'no', 'with-renamedFrom', 'without', 'rotate') as fc.Arbitrary<Fate['rename']>,
  changeType: fc.boolean(),
  k: fc.nat(3),
  toggle: fc.boolean(),
  key: fc.nat(1000),
});

/** A current protocol and a desired one made from it, with `min`..`max` steps each (names from `names`). */
export function currentAndDesired(
  min: number,
  max: number,
  names: readonly string[] = NAMES,
): fc.Arbitrary<{ current: StepSpec[]; desired: DesiredStep[] }> {
  return protocolSpecs(min, max, names).chain((current) =>
    fc
      .tuple(
        fc.array(fate, { minLength: current.length, maxLength: current.length }),
        fc.array(fc.tuple(stepSpec('new'), fc.nat(1000)), { maxLength: 6 }),
        fc.constantFrom(...STEP_TYPES),
      )
      .map(([fates, added, otherType]) => {
        const out: { key: number; step: DesiredStep }[] = [];
        current.forEach((s, i) => {
          const f = fates[i];
          if (!f.keep && f.rename === 'no') return;
          const stepType = f.changeType ? otherType : s.stepType;
          // rotate: takes the name of the next current step (renames in chains and cycles)
          const name =
            f.rename === 'no' ? s.name : f.rename === 'rotate' ? current[(i + 1) % current.length].name : renamed(s.name);
          const step: DesiredStep = stepOf({ name, stepType, disabled: f.toggle ? !s.disabled : s.disabled, k: f.k });
          if ((f.rename === 'with-renamedFrom' || f.rename === 'rotate') && name !== s.name) step.renamedFrom = s.name;
          out.push({ key: f.key, step });
        });
        added.forEach(([spec, key], j) => out.push({ key, step: stepOf({ ...spec, name: `New ${j}` }) }));
        out.sort((a, b) => a.key - b.key);
        return { current, desired: out.slice(0, max).map((x) => x.step) };
      })
      .filter(({ desired }) => desired.length >= min && new Set(desired.map((d) => d.name)).size === desired.length),
  );
}

/** Length of a longest strictly increasing subsequence, by the quadratic count (independent of the planner's). */
export function lisLength(values: number[]): number {
  const best = values.map(() => 1);
  for (let i = 0; i < values.length; i++)
    for (let j = 0; j < i; j++) if (values[j] < values[i]) best[i] = Math.max(best[i], best[j] + 1);
  return Math.max(0, ...best);
}

/** For each current step (in its order) that a desired step keeps, that step's desired place. */
export function keptDesiredPlaces(current: string[], desired: { name: string; renamedFrom?: string }[]): number[] {
  const claimedBy = new Map<string, number>();
  desired.forEach((d, i) => {
    if (d.renamedFrom !== undefined && current.includes(d.renamedFrom)) claimedBy.set(d.renamedFrom, i);
  });
  desired.forEach((d, i) => {
    const byRename = d.renamedFrom !== undefined && current.includes(d.renamedFrom);
    if (!byRename && current.includes(d.name) && !claimedBy.has(d.name)) claimedBy.set(d.name, i);
  });
  return current.filter((n) => claimedBy.has(n)).map((n) => claimedBy.get(n) as number);
}

/** The desired places of the kept steps, in the current order, from a plan's `match` (desired → current index). */
export function keptInCurrentOrder(match: number[]): number[] {
  return match
    .map((currentIndex, desiredIndex) => ({ currentIndex, desiredIndex }))
    .filter((m) => m.currentIndex >= 0)
    .sort((a, b) => a.currentIndex - b.currentIndex)
    .map((m) => m.desiredIndex);
}
