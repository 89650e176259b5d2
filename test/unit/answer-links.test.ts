// Answer links in a user's own Node-RED (issue 18 points 2 and 3), as pure decisions: the key a node signs with
// when its dialog never stored a secret, why a link is refused, and why there is no public URL.
import assert from 'node:assert/strict';
import fs from 'fs';
import os from 'os';
import path from 'path';

import fc from 'fast-check';

import { derivedSecret, KEY_FILE, loadLinkKey } from '../../src/nodes/lh-answer-page/link-key';
import { signLink, unownedReason, verifyLink } from '../../src/nodes/lh-answer-page/link-signing';
import { forbiddenPage } from '../../src/nodes/lh-answer-page/page-html';
import { missingPublicUrl, noLinkLine, pageUrl } from '../../src/nodes/lh-answer-page/page-links';

describe('answer link key in the user dir', function () {
  let dir: string;
  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-link-key-'));
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is made once, readable by its owner only, and read back the same by a later start', function () {
    const first = loadLinkKey(dir);
    assert.equal(first.persisted, true);
    assert.equal(fs.statSync(path.join(dir, KEY_FILE)).mode & 0o777, 0o600);
    const again = loadLinkKey(dir);
    assert.deepEqual(again.key, first.key);
    // a link signed before "the restart" verifies after it
    const claims = { i: 'inst', s: 'A' as const, e: '42', x: Date.now() + 60_000 };
    const token = signLink(claims, derivedSecret(first.key, 'node-1'));
    assert.equal(verifyLink(token, derivedSecret(again.key, 'node-1'), Date.now()).ok, true);
  });

  it('gives every node its own secret, never the key itself', function () {
    const { key } = loadLinkKey(dir);
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (a, b) => {
        fc.pre(a !== b);
        assert.notEqual(derivedSecret(key, a), derivedSecret(key, b));
        assert.ok(!derivedSecret(key, a).includes(key.toString('base64url')));
      }),
    );
  });

  it('without a user dir, or with a file that holds no key, signs for this run only and says why (never overwrites)', function () {
    const none = loadLinkKey(undefined);
    assert.equal(none.persisted, false);
    fs.writeFileSync(path.join(dir, KEY_FILE), 'not a key\n');
    const bad = loadLinkKey(dir);
    assert.equal(bad.persisted, false);
    assert.match(bad.persisted ? '' : bad.reason, /does not hold a key/);
    assert.equal(fs.readFileSync(path.join(dir, KEY_FILE), 'utf8'), 'not a key\n');
  });
});

describe('a refused link: why, and what to do', function () {
  it('tells a cut link from one signed elsewhere, for any claims', function () {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0 }),
        fc.string({ minLength: 1 }),
        (e, x, secret) => {
          const token = signLink({ i: 'inst', s: 'B', e, x }, secret);
          assert.equal(unownedReason(token), 'signature');
          assert.equal(unownedReason(token.slice(0, token.length - 5)), 'malformed');
          assert.equal(unownedReason(token.split('.')[0]), 'malformed');
        },
      ),
    );
    assert.equal(unownedReason(undefined), 'malformed');
  });

  it('never blames tampering, and always points to the editor or the instrument', function () {
    for (const why of ['expired', 'malformed', 'signature', 'instrument'] as const) {
      const html = forbiddenPage(why, 24 * 3_600_000);
      assert.doesNotMatch(html, /altered|tamper|forged/i, why);
      assert.match(html, /answer it in the Node-RED editor or on the instrument/, why);
    }
    assert.match(forbiddenPage('expired', 2 * 3_600_000), /valid for 2 hours/);
  });
});

describe('no public URL', function () {
  it('names the environment variable or the setting, and a given address is left to pageUrl', function () {
    assert.match(String(missingPublicUrl(undefined, 'env', '')), /LH_PUBLIC_URL is not set.*Public URL of the answer page/);
    assert.match(String(missingPublicUrl('', 'env', 'MY_URL')), /MY_URL is not set/);
    assert.match(String(missingPublicUrl('  ', 'str', '')), /Public URL of the answer page is empty/);
    assert.equal(missingPublicUrl('https://lab.example.org', 'env', ''), undefined);
    assert.equal(pageUrl('https://lab.example.org/', '/', '/lh-answer'), 'https://lab.example.org/lh-answer');
    assert.match(noLinkLine('why'), /^\(No answer link: why\. Answer in the Node-RED editor or on the instrument\.\)$/);
  });
});
