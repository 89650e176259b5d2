import assert from 'node:assert/strict';

import { resetHomes } from '../../src/instrument';
import {
  forgetWatch,
  newWatch,
  readSavedWatch,
  savedWatch,
  SeenErrors,
  watchFor,
} from '../../src/nodes/lh-error-poll/seen-errors';

type Rec = { id: string; n?: number };
const id = (r: Rec): string => r.id;
const all = (): boolean => true;

describe('seen errors', function () {
  it('keeps the latest record of an active error and resolves that one', function () {
    const seen = new SeenErrors();
    seen.update<Rec>([{ id: 'a', n: 1 }], id, all);
    assert.equal(seen.update<Rec>([{ id: 'a', n: 2 }], id, all).raised.length, 0);
    assert.deepEqual(seen.update<Rec>([], id, all).resolved, [{ id: 'a', n: 2 }]);
    assert.equal(seen.size, 0);
  });

  it('ignores records without an id', function () {
    const seen = new SeenErrors();
    const diff = seen.update<Rec>([{ id: 'a' }, { id: undefined as unknown as string }], (r) => r.id, all);
    assert.equal(diff.raised.length, 1);
  });

  it('a filtered-out error that stays pending is never raised later, and not resolved when it goes', function () {
    const seen = new SeenErrors();
    assert.equal(seen.update<Rec>([{ id: 'w' }], id, () => false).raised.length, 0);
    assert.equal(seen.update<Rec>([], id, all).resolved.length, 0);
  });

  it('a snapshot restores the active errors and the resolved ids', function () {
    const seen = new SeenErrors();
    seen.update<Rec>([{ id: 'a' }, { id: 'b' }], id, all);
    seen.update<Rec>([{ id: 'b' }], id, all);
    const copy = new SeenErrors();
    copy.restore(JSON.parse(JSON.stringify(seen.snapshot())));
    const diff = copy.update<Rec>([{ id: 'a' }, { id: 'b' }, { id: 'c' }], id, all);
    assert.deepEqual(
      diff.raised.map((r) => r.id),
      ['c'],
      'a was resolved, b is active',
    );
  });

  it('restore ignores what is not a snapshot', function () {
    const seen = new SeenErrors();
    seen.restore('nonsense');
    seen.restore({ active: 3, resolved: [1, 'x'] });
    assert.equal(seen.size, 0);
    assert.equal(seen.update<Rec>([{ id: 'x' }], id, all).raised.length, 0, 'the string id was remembered as resolved');
  });

  it('remembers the last 1000 resolved ids', function () {
    const seen = new SeenErrors();
    for (let i = 0; i <= 1000; i++) {
      seen.update<Rec>([{ id: String(i) }], id, all);
      seen.update<Rec>([], id, all);
    }
    assert.equal(seen.update<Rec>([{ id: '1000' }], id, all).raised.length, 0);
    assert.equal(seen.update<Rec>([{ id: '0' }], id, all).raised.length, 1, 'the oldest id was forgotten');
  });

  it("keeps one memory per instrument and node, in the instrument's home, until the node is removed", function () {
    try {
      const first = watchFor('http://a|https://b', 'n1');
      assert.equal(watchFor('http://a|https://b', 'n1'), first);
      assert.notEqual(watchFor('http://a|https://b', 'n2'), first);
      assert.notEqual(watchFor('http://c|https://b', 'n1'), first, 'another instrument');
      forgetWatch('http://a|https://b', 'n1');
      assert.notEqual(watchFor('http://a|https://b', 'n1'), first);
      const kept = watchFor('http://a|https://b', 'n1');
      resetHomes(); // a restart of Node-RED
      assert.notEqual(watchFor('http://a|https://b', 'n1'), kept);
    } finally {
      resetHomes();
    }
  });

  it('saves its memory as version 1 and reads version 1 of the same instrument only', function () {
    const watch = newWatch();
    watch.sources.A.update<Rec>([{ id: 'a' }], id, all);
    const saved = JSON.parse(JSON.stringify(savedWatch(watch, 'k'))) as Record<string, unknown>;
    assert.equal(saved.version, 1);
    const read = readSavedWatch(saved, 'k');
    assert.ok(read);
    const copy = new SeenErrors();
    copy.restore(read.A);
    assert.equal(copy.size, 1);
    assert.equal(readSavedWatch(saved, 'other instrument'), undefined);
    assert.equal(readSavedWatch({ ...saved, version: 2 }, 'k'), undefined);
    assert.equal(readSavedWatch({ ...saved, version: undefined }, 'k'), undefined);
    assert.equal(readSavedWatch('x', 'k'), undefined);
  });
});
