/**
 * ErrorGate.beforeSweep (review22): what a new holder's watch brings in line before its sweep. `gone` names the errors
 * this replica recorded raised that the shared memory no longer holds (another replica reported them resolved while
 * this one was a standby), but only when that absence proves it: never after a loss of Redis's data noticed since the
 * mirror was read, nor with an incomplete mirror. The gate on fakes: its coordination and its shared memory.
 */
import assert from 'node:assert/strict';

import type { InstrumentCoordination } from '../../src/coordination/coordinator';
import { ErrorGate } from '../../src/coordination/error-gate';
import { type SeenEntry, SharedSeen, type StoredEntry } from '../../src/coordination/stores';

interface Rec {
  id: string;
  title: string;
}

const entry = (id: string): SeenEntry => ({ source: 'A', key: id, identity: `i-${id}`, record: { id, title: id } });

function gate(options: {
  holder?: boolean;
  token?: number;
  dataLost?: { token: number; seen: number };
  stored?: SeenEntry[];
  mirror?: SeenEntry[];
  mirrorToken?: number;
}): ErrorGate<Rec> {
  const coordination = {
    isHolder: options.holder ?? true,
    state: { role: options.holder === false ? 'standby' : 'holder', token: options.token ?? 5 },
    dataLost: options.dataLost,
    addSettler: () => undefined,
    untoldLoss: () => Promise.resolve(false),
  } as unknown as InstrumentCoordination;
  const stored: StoredEntry[] = (options.stored ?? []).map((e) => ({ field: SharedSeen.fieldOf(e), raw: '', entry: e }));
  const seen = { stored: () => Promise.resolve(stored) } as unknown as SharedSeen;
  const g = new ErrorGate<Rec>(coordination, seen, { keyOf: (_s, r) => r.id });
  const inside = g as unknown as { mirror: Map<string, SeenEntry>; mirrorToken?: number };
  inside.mirror = new Map((options.mirror ?? []).map((e) => [SharedSeen.fieldOf(e), e]));
  inside.mirrorToken = options.mirrorToken;
  return g;
}

const ids = (items: { record: Rec }[] | undefined): string[] => (items ?? []).map((i) => i.record.id);

describe('error gate: what a new holder brings in line before its sweep', function () {
  it('gone: recorded here, no longer in the shared memory (resolved elsewhere); raised: what it holds', async function () {
    const out = await gate({ mirror: [entry('x'), entry('y')], mirrorToken: 3, stored: [entry('y'), entry('z')] }).beforeSweep();
    assert.deepEqual(ids(out?.gone), ['x']);
    assert.deepEqual(ids(out?.raised), ['y', 'z']);
  });

  it('nothing gone after a loss of data noticed since the mirror was read: absence proves nothing', async function () {
    const lost = await gate({ mirror: [entry('x')], mirrorToken: 3, dataLost: { token: 5, seen: 4 } }).beforeSweep();
    assert.deepEqual(ids(lost?.gone), []);
    const older = await gate({ mirror: [entry('x')], mirrorToken: 3, dataLost: { token: 2, seen: 1 } }).beforeSweep();
    assert.deepEqual(ids(older?.gone), ['x'], 'a loss before the mirror was read does not count');
    const incomplete = await gate({ mirror: [entry('x')], mirrorToken: undefined }).beforeSweep();
    assert.deepEqual(ids(incomplete?.gone), [], 'an incomplete mirror (or none) proves nothing');
  });

  it('undefined when no sweep is due: a standby, or the sweep of this lease done', async function () {
    assert.equal(await gate({ holder: false }).beforeSweep(), undefined);
    const g = gate({ token: 7 });
    (g as unknown as { sweptToken?: number }).sweptToken = 7;
    assert.equal(await g.beforeSweep(), undefined);
  });
});
