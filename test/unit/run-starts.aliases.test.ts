/**
 * Review finding (low): the one-start-per-instrument claim book is keyed by the text of the base URL. Two lh-server
 * nodes for the same instrument written as `http://localhost:8090` and `http://127.0.0.1:8090` (or with an IPv6
 * literal, or with and without an explicit default port... only the latter is normalised) get two books, so two
 * starts arriving together send two creates, although the README says "across every lh-server node of it".
 */
import assert from 'node:assert/strict';
import { LhError, runStartsFor } from '../../src/client';

describe('review: the start claim across lh-server nodes of one instrument', function () {
  it('a second start through another lh-server node of the same instrument (localhost vs 127.0.0.1) is refused busy', function () {
    const first = runStartsFor('http://127.0.0.1:18090/NimbusLite').claim('protocol 1', 'start-run');
    try {
      assert.throws(
        () => runStartsFor('http://localhost:18090/NimbusLite').claim('protocol 1', 'start-run').release(),
        (err: unknown) => err instanceof LhError && err.kind === 'busy',
      );
    } finally {
      first.release();
    }
  });
});
