/**
 * Review finding (the secret scan every test run passes, test/support/secret-scan.ts): it took any text shaped
 * `eyJ….eyJ…` for a JWT. The answer page's signed links are base64url JSON claims (`eyJ…`), a dot, and a base64url
 * HMAC, and one HMAC in 262,144 begins with `eyJ` as well: such a link, in a raised msg, the answer page or the lab
 * state document, failed the whole run by chance (the link key is random in each run). A JWT is now one whose first
 * part decodes to a JOSE header (it names its `alg`).
 */
import assert from 'node:assert/strict';

import { signLink } from '../../src/nodes/lh-answer-page/link-signing';
import { signJwt } from '../../src/simulator/jwt';
import { holdsSecret } from '../support/secret-scan';

describe('review: the secret scan tells an answer link from a JWT', function () {
  it('an answer link whose signature begins with eyJ is no leak; a JWT still is, in any text', function () {
    // found by trying secrets in order: the first whose link signature begins with eyJ
    const claims = { i: 'abcdefabcdefabcd', s: 'B' as const, e: '0f8fad5b-d9cb-469f-a165-70867728950e', x: 1_800_000_000_000 };
    const link = signLink(claims, 'link-secret-172768');
    assert.match(link.split('.')[1], /^eyJ/, 'the link this test is about');
    const url = `https://lab.example/lh/answer?t=${link}`;
    assert.equal(holdsSecret(url), false, `an answer link taken for a JWT: ${url}`);
    assert.equal(holdsSecret(JSON.stringify({ answerUrl: url, title: 'Door open' })), false);

    const jwt = signJwt({ nameid: '1', given_name: 'admin', role: ['Admin'], iat: 1, exp: 2, jti: 'j' }, Buffer.from('k'));
    for (const text of [jwt, `Bearer ${jwt}`, `${url} and ${jwt}`, `{"token":"${jwt}"}`]) {
      assert.equal(holdsSecret(text), true, `a JWT missed: ${text}`);
    }
    // another header order, an unsigned one
    const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    assert.equal(holdsSecret(`${b64({ typ: 'JWT', alg: 'none' })}.${b64({ sub: 'x' })}.`), true);
  });
});
