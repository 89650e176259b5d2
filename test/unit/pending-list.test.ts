import assert from 'node:assert/strict';

import fc from 'fast-check';

import { foldPending, PendingEntry } from '../../src/nodes/shared/pending-list';

const raisedA = (id: string, title = `error ${id}`): Record<string, unknown> => ({
  event: 'raised',
  source: 'A',
  errorId: id,
  payload: { id, title, message: 'm', severity: 'Error', errorResponses: [{ response: 'Retry' }, { response: 'Abort' }] },
});
const resolvedA = (id: string): Record<string, unknown> => ({ event: 'resolved', source: 'A', errorId: id, payload: { id } });

describe('the pending list folded from lh-error-poll msgs (pending-list.ts)', function () {
  it('raised adds, resolved removes, a reused id replaces, connection msgs change nothing', function () {
    let list: readonly PendingEntry[] = [];
    for (const m of [raisedA('1'), raisedA('2'), raisedA('3'), resolvedA('2'), { event: 'offline', payload: {} }]) {
      list = foldPending(list, m);
    }
    assert.deepEqual(
      list.map((e) => [e.key, e.title, e.responses]),
      [
        ['A:1', 'error 1', ['Retry', 'Abort']],
        ['A:3', 'error 3', ['Retry', 'Abort']],
      ],
    );
    list = foldPending(list, raisedA('1', 'a new error under an old id'));
    assert.deepEqual(
      list.map((e) => [e.key, e.title]),
      [
        ['A:3', 'error 3'],
        ['A:1', 'a new error under an old id'],
      ],
    );
    assert.equal(foldPending(list, resolvedA('9')), list, 'an unknown resolution: the same list');
  });

  it('model: any sequence of raised/resolved over a few ids equals a map of the raised minus the resolved, bounded', function () {
    const event = fc.record({ raised: fc.boolean(), id: fc.integer({ min: 0, max: 6 }), source: fc.constantFrom('A', 'B') });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 80 }), fc.integer({ min: 1, max: 8 }), (events, max) => {
        let list: readonly PendingEntry[] = [];
        const model = new Map<string, number>(); // key -> order of its last raise
        let order = 0;
        for (const e of events) {
          const id = String(e.id);
          const msg =
            e.source === 'A'
              ? { event: e.raised ? 'raised' : 'resolved', source: 'A', errorId: id, payload: { id, title: 't' } }
              : { event: e.raised ? 'raised' : 'resolved', source: 'B', uuid: id, payload: { uuid: id, title: 't' } };
          list = foldPending(list, msg, max);
          const key = `${e.source}:${id}`;
          model.delete(key);
          if (e.raised) model.set(key, order++);
          while (model.size > max) model.delete([...model.entries()].sort((a, b) => a[1] - b[1])[0][0]);
        }
        const expected = [...model.entries()].sort((a, b) => a[1] - b[1]).map(([k]) => k);
        assert.deepEqual(
          list.map((e) => e.key),
          expected,
        );
      }),
    );
  });
});
