/**
 * Review (review37): what a poll node saves while msgs wait unsent (handed to its next instance, lost at a stop) leaves
 * their errors out: a memory restored from it (a restart) and shown the same list reports again exactly what waited
 * unsent, raised and resolved, and nothing else. Seeded model: random lists over a few ids, titles reused under an id.
 */
import assert from 'node:assert/strict';

import { newWatch, savedWatch, SeenErrors, UnsentError } from '../../src/nodes/lh-error-poll/seen-errors';
import { Rng } from '../support/prng';

interface Rec {
  id: string;
  title: string;
  severity: string;
}

const idOf = (r: Rec): string => r.id;
const all = (): boolean => true;
const names = (records: Rec[]): string[] => records.map((r) => `${r.id}/${r.title}`).sort();

function randomList(rng: Rng): Rec[] {
  const out: Rec[] = [];
  for (let i = rng.int(0, 5); i > 0; i--) {
    out.push({ id: String(rng.int(1, 4)), title: rng.pick(['Door open', 'Clot', 'Arm collision']), severity: 'Error' });
  }
  return out;
}

describe('review: the saved memory leaves out what waits unsent (seeded)', function () {
  for (let seed = 1; seed <= 300; seed++) {
    it(`seed ${seed}`, function () {
      const rng = new Rng(seed);
      const watch = newWatch();
      const live = watch.sources.A;
      for (let i = rng.int(0, 6); i > 0; i--) live.update(randomList(rng), idOf, all);
      // the poll whose msgs wait when the node closes: handed over (watch.unsent), then the process stops
      const list = randomList(rng);
      const diff = live.update(list, idOf, all);
      const errors: UnsentError[] = [
        ...diff.raised.map((record) => ({ list: 'raised' as const, source: 'A' as const, id: record.id, record })),
        ...diff.resolved.map((record) => ({ list: 'resolved' as const, source: 'A' as const, id: record.id, record })),
      ];
      watch.unsent = [{ out: [null, null, null], errors }];
      const restored = new SeenErrors();
      restored.restore(JSON.parse(JSON.stringify(savedWatch(watch, 'k').A)));
      const again = restored.update(list, idOf, all);
      assert.deepEqual(names(again.raised), names(diff.raised), 'raised again: what waited unsent');
      assert.deepEqual(names(again.resolved), names(diff.resolved), 'resolved again: what waited unsent');
      // once sent, the saved memory is the memory
      watch.unsent = undefined;
      assert.deepEqual(savedWatch(watch, 'k').A, live.snapshot());
    });
  }
});
