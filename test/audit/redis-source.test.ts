/**
 * `lh-audit verify|export redis://...`: the URL as printed never shows its password, whatever characters it has,
 * also when the URL does not parse (a password with an unescaped / # ? @ makes it unparsable).
 */
import assert from 'assert';
import { spawnSync } from 'child_process';
import path from 'path';

import fc from 'fast-check';

import { parseRedisSource, safeRedisUrl } from '../../src/audit/redis-source';
import { freePort } from '../support/redis-server';

describe('lh-audit redis:// sources: the password is never printed', function () {
  it('safeRedisUrl hides any password, and parse errors never quote it', function () {
    const password = fc
      .string({ unit: fc.constantFrom(...'abcXYZ019/#?@:%!$&=+'.split('')), minLength: 6, maxLength: 20 })
      .filter((p) => /[a-z]{2}/i.test(p));
    fc.assert(
      fc.property(password, fc.constantFrom('', 'user'), fc.constantFrom('', '/0', '/x'), (pw, user, db) => {
        const url = `redis://${user}:${pw}@h.invalid:6379${db}?prefix=x`;
        assert.ok(!safeRedisUrl(url).includes(pw), safeRedisUrl(url));
        try {
          parseRedisSource(url, {});
        } catch (err) {
          assert.ok(!(err as Error).message.includes(pw), (err as Error).message);
        }
      }),
    );
  });

  it('Redis not reachable: exit 2, the host and port and why, no stack trace, no password', async function () {
    const port = await freePort();
    const cli = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');
    for (const command of ['verify', 'export']) {
      const r = spawnSync(process.execPath, [cli, command, `redis://:Sup3r%2FS3cret@127.0.0.1:${port}?prefix=x`], {
        encoding: 'utf8',
      });
      assert.strictEqual(r.status, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`cannot connect to Redis at 127\\.0\\.0\\.1:${port} \\(connect ECONNREFUSED`));
      assert.doesNotMatch(`${r.stdout}${r.stderr}`, /Sup3r|S3cret|\n\s+at /);
    }
  });
});
