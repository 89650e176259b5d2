import { strict as assert } from 'node:assert';

import { readJsonBody, tokenlessRead } from '../../src/simulator/dispatch';
import { A_RESPONSE_TYPE, B_MEDIA_TYPE, B_PROBLEM_TYPE, PROBLEM_TYPE } from '../../src/simulator/media-types';
import { HttpProblem } from '../../src/simulator/problem';
import { inPrefix } from '../../src/simulator/request-log';
import { isCredentialRejection, replyType } from '../../src/simulator/serve';

describe('simulator: request decisions (pure parts of the HTTP pipeline)', function () {
  it('lenient A answers every read without a token (as hardware does) only when no Authorization is sent', function () {
    assert.equal(tokenlessRead(true, 'A', 'GET', '/api/v1/System-Ready'), true);
    assert.equal(tokenlessRead(true, 'A', 'GET', '/api/v1/system-ready', 'Bearer expired'), false);
    assert.equal(tokenlessRead(false, 'A', 'GET', '/api/v1/system-ready'), false, 'strict: a token always');
    assert.equal(tokenlessRead(true, 'B', 'GET', '/api/v1/system-ready'), false);
    assert.equal(tokenlessRead(true, 'A', 'PUT', '/api/v1/protocol-run'), false);
    assert.equal(tokenlessRead(true, 'A', 'GET', '/api/v1/errors'), true, 'every read of A, not only the status ones');
    assert.equal(
      tokenlessRead(true, 'A', 'GET', '/api/v1/authenticate'),
      false,
      "check-authentication reports the caller's session",
    );
  });

  it('a route that takes a body needs non-empty valid JSON; one that takes none ignores it', function () {
    assert.equal(readJsonBody('none', 'not json'), undefined);
    assert.deepEqual(readJsonBody('json', '{"a":1}'), { a: 1 });
    for (const raw of ['', '  ', '{broken']) {
      assert.throws(
        () => readJsonBody('json', raw),
        (e: unknown) => e instanceof HttpProblem && e.status === 400,
      );
    }
  });

  it('each interface answers in its own media types; only login and renewal rejections below 500 are slowed', function () {
    assert.equal(replyType('A', 200), A_RESPONSE_TYPE);
    assert.equal(replyType('A', 404), PROBLEM_TYPE);
    assert.equal(replyType('B', 204), B_MEDIA_TYPE);
    assert.equal(replyType('B', 503), B_PROBLEM_TYPE);
    assert.equal(isCredentialRejection('A', 'POST', '/api/v1/authenticate', 401), true);
    assert.equal(isCredentialRejection('A', 'POST', '/api/v1/authenticate/renew-token', 400), true);
    assert.equal(isCredentialRejection('A', 'POST', '/api/v1/authenticate', 503), false);
    assert.equal(isCredentialRejection('A', 'POST', '/api/v1/authenticate', 200), false);
    assert.equal(isCredentialRejection('A', 'GET', '/api/v1/authenticate', 401), false);
    assert.equal(isCredentialRejection('B', 'POST', '/api/v1/authenticate', 401), false);
  });

  it('interface A lives under its prefix (path or sub-path), B has none', function () {
    assert.equal(inPrefix('A', '', '/anything'), true);
    assert.equal(inPrefix('A', '/NimbusLite', '/NimbusLite'), true);
    assert.equal(inPrefix('A', '/NimbusLite', '/NimbusLite/api/v1/errors'), true);
    assert.equal(inPrefix('A', '/NimbusLite', '/NimbusLiteX/api'), false);
    assert.equal(inPrefix('B', '/NimbusLite', '/api/vector/v3/errors'), true);
  });
});
