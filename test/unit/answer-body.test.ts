/**
 * The PUT errors/runtime body lh-answer-error and the error policy send (answerBody): an errorData item without an id
 * never goes out as the id "undefined" (review99's item left): the instrument could match no such item.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { PendingError } from '../../src/client';
import { answerBody } from '../../src/nodes/answering/answer-body';

const error = (errorData: unknown[]): PendingError =>
  ({
    id: 'e1',
    title: 'Tip pickup failed',
    errorResponses: [{ response: 'Retry' }, { response: 'Abort' }],
    errorData,
  }) as PendingError;

describe('answer body: errorData items', function () {
  it('leaves out items without an id; an error whose items all lack one is answered as its own item', function () {
    const body = answerBody(error([{ id: 'i1' }, { title: 'no id' }, { id: '' }, { id: null }, { id: 7 }]), 'Retry', undefined);
    assert.deepEqual(body.errorData, [
      { id: 'i1', selectedResponse: 'Retry' },
      { id: '7', selectedResponse: 'Retry' },
    ]);
    assert.deepEqual(answerBody(error([{ title: 'no id' }, 'text', null]), 'Abort', undefined).errorData, [
      { id: 'e1', selectedResponse: 'Abort' },
    ]);
    assert.throws(
      () => answerBody(error([{ title: 'no id' }]), 'Retry', { undefined: 'Abort' }),
      /errorDataResponses\.undefined.*is not an errorData item of error e1 \(items: none\)/,
    );
  });

  it('property: every item id sent is an id the error listed, never "undefined", "null" or empty', function () {
    const id = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(undefined), fc.constant(null), fc.double());
    const item = fc.oneof(fc.record({ id }, { requiredKeys: [] }), fc.constant(null), fc.string({ maxLength: 3 }));
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }), (items: unknown[]) => {
        const listed = new Set(
          items
            .filter((i): i is { id?: unknown } => typeof i === 'object' && i !== null)
            .map((i) => i.id)
            .filter((x) => (typeof x === 'string' && x.trim() !== '') || (typeof x === 'number' && Number.isFinite(x)))
            .map(String),
        );
        const sent = answerBody(error(items), 'Retry', undefined).errorData.map((d) => d.id);
        if (listed.size === 0) assert.deepEqual(sent, ['e1']);
        else for (const s of sent) assert.ok(listed.has(s), `${s} was listed`);
      }),
      { numRuns: 300 },
    );
  });
});
