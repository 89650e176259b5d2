import assert from 'node:assert/strict';

import { LhError } from '../../src/client';
import { failureReason } from '../../src/nodes/shared/status';

describe('status reasons: a 401 says where the login goes (issue 32 item 4)', function () {
  it('a 401 outside a login names the lh-server user and password; a 403 stays as it was; a refused login too', function () {
    const e = (statusCode: number, operation: string): LhError =>
      new LhError(`${operation}: ${statusCode}`, { kind: 'auth', operation, statusCode });
    assert.equal(failureReason(e(401, 'clear-errors')), 'not authorised (401): set user/password in lh-server');
    assert.equal(failureReason(e(403, 'clear-errors')), 'not authorised (403)');
    assert.equal(failureReason(e(401, 'authenticate')), 'login failed (rejected, 401)');
  });
});

describe('answer page status: a long error key is shortened (issue 32 item 7)', function () {
  it('keys up to 12 characters as they are, a uuid as its first 8 and an ellipsis', async function () {
    const { statusKey } = await import('../../src/nodes/lh-answer-page/page-links');
    assert.equal(statusKey('E-1042'), 'E-1042');
    assert.equal(statusKey('3f2a9c1e-0b7d-4e11-9a55-2c8f0e6d7b31'), '3f2a9c1e…');
  });
});
