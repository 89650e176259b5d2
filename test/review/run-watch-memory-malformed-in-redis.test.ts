/**
 * Review finding (fix86, item 6): lh-run-watch's run memory in Redis (coordinated) was read by `parseRunMemory`,
 * which checked only `finished`. A record with a malformed run (states not a list, a firstSeenAt that is text, a
 * state no run has: written by an older or newer version, by hand, or cut) was taken as it was, and the decisions on
 * it threw at every poll: the new lease holder's watch said nothing more for as long as the record stayed. Now the
 * whole record is checked; a bad one is dropped with a warning naming the field, and the watch goes on from what the
 * instrument says.
 *
 * Seeded: valid memories drawn at random read back as they were written; each drawn with one field broken is dropped,
 * warned about, and the decisions on what is read then (a fresh memory) do not throw.
 */
import assert from 'node:assert/strict';

import { RUN_STATE_NAMES } from '../../src/contract/instrument-contract';
import { newMemory, observe, type RunMemory } from '../../src/nodes/runs/run-decisions';
import { parseRunMemory } from '../../src/nodes/runs/run-memory-store';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;

function validMemory(rng: Rng): RunMemory {
  const memory: RunMemory = { finished: Array.from({ length: rng.int(0, 3) }, (_, i) => `${i}|P|2026-11-30T10:0${i}:00Z`) };
  if (rng.chance(0.7)) memory.state = rng.pick(RUN_STATE_NAMES);
  if (rng.chance(0.5)) memory.progressAt = rng.int(0, 2 ** 40);
  if (rng.chance(0.7)) {
    memory.run = {
      protocolId: rng.chance(0.8) ? rng.int(1, 99) : null,
      protocolName: rng.chance(0.8) ? 'Plate wash' : null,
      startTime: rng.chance(0.5) ? '2026-11-30T10:00:00Z' : null,
      firstSeenAt: rng.int(0, 2 ** 40),
      states: Array.from({ length: rng.int(0, 4) }, () => rng.pick(RUN_STATE_NAMES)),
    };
    if (rng.chance(0.5)) memory.run.priorRecordIds = rng.chance(0.8) ? ['r1', 'r2'] : null;
  }
  return memory;
}

/** One field of `memory`'s JSON broken; what it is. */
function broken(rng: Rng, memory: RunMemory): { json: string; what: string } {
  const v = JSON.parse(JSON.stringify(memory)) as Record<string, unknown>;
  const run = (v.run ?? { protocolId: 1, protocolName: 'P', startTime: null, firstSeenAt: 1, states: [] }) as Record<
    string,
    unknown
  >;
  const breaks: [string, () => void][] = [
    ['finished', () => (v.finished = rng.pick(['x', [1], null, {}]))],
    ['state', () => (v.state = rng.pick(['Flying', 3, [], {}]))],
    ['progressAt', () => (v.progressAt = rng.pick(['soon', [], {}, true]))],
    ['run', () => (v.run = rng.pick(['x', 3, [], true]))],
    ['run.states', () => ((v.run = run), (run.states = rng.pick(['Running', [1], ['Flying'], null, {}])))],
    ['run.firstSeenAt', () => ((v.run = run), (run.firstSeenAt = rng.pick(['1', null, [], {}])))],
    ['run.protocolId', () => ((v.run = run), (run.protocolId = rng.pick(['1', 1.5, [], {}])))],
    ['run.protocolName', () => ((v.run = run), (run.protocolName = rng.pick([1, [], {}, true])))],
    ['run.startTime', () => ((v.run = run), (run.startTime = rng.pick([1, [], {}, true])))],
    ['run.priorRecordIds', () => ((v.run = run), (run.priorRecordIds = rng.pick(['r1', [1], {}, true])))],
  ];
  const [what, apply] = rng.pick(breaks);
  apply();
  return { json: JSON.stringify(v), what };
}

describe(`review: a malformed run memory in Redis (seed ${SEED}, ${CASES} cases)`, function () {
  it('valid memories read back as written', function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const memory = validMemory(rng);
      const warnings: string[] = [];
      assert.deepEqual(
        parseRunMemory(JSON.stringify(memory), (w) => warnings.push(w)),
        memory,
        `seed ${SEED} case ${c}`,
      );
      assert.deepEqual(warnings, []);
    }
  });

  it('one broken field: dropped with a warning naming it; the watch decides on from the instrument, never throws', function () {
    const rng = new Rng(SEED + 1);
    for (let c = 0; c < CASES; c++) {
      const { json, what } = broken(rng, validMemory(rng));
      const warnings: string[] = [];
      const read = parseRunMemory(json, (w) => warnings.push(w));
      const story = `seed ${SEED} case ${c}: ${what} broken, ${json}`;
      // what the store does with it: undefined is a fresh memory
      const memory = read ?? newMemory();
      const status = {
        protocolRunState: rng.pick(RUN_STATE_NAMES),
        protocolId: 7,
        protocolName: 'Plate wash',
        startTime: '2026-11-30T11:00:00Z',
      } as Parameters<typeof observe>[1];
      assert.doesNotThrow(() => observe(memory, status, Date.now()), story);
      assert.equal(read, undefined, story);
      assert.equal(warnings.length, 1, story);
      assert.ok(warnings[0].includes(what.split('.').pop() ?? what), `${story}: ${warnings[0]}`);
      assert.match(warnings[0], /dropped, the watch goes on from what the instrument says/);
    }
  });
});
