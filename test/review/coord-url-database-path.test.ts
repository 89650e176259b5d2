/**
 * lh-coordination's Redis URL: `redis://host:6379/2` names database 2. A path that is not a database number
 * (`/abc`, `/1x`, `/-1`, `/99999`, `/1/2`) was read as database 0 without a word, so replicas meant for database 2
 * met in database 0, beside whatever else lives there; and in sentinel mode the number was dropped altogether (the
 * master's database 0), in cluster mode too (Cluster has database 0 only). Now: a path is `/0` to `/65535` or
 * nothing, the same in every URL, none in cluster mode; anything else is refused naming the field and the rule, by
 * the runtime and by the editor's field check (the built html, as Node-RED serves it). Property over the repo's
 * seeded PRNG: paths drawn from digits, signs, letters, slashes and dots.
 */
import assert from 'node:assert/strict';

import Redis from 'ioredis';

import { CoordinationConfigError, coordinationSettings } from '../../src/coordination/config';
import { connectRedis } from '../../src/coordination/connect';
import { editorDefinition } from '../support/editor-definition';
import { Rng } from '../support/prng';

/** What the rule says a path is: its database, or undefined when refused (written apart from the implementation). */
function expected(path: string): number | undefined {
  if (path === '' || path === '/') return 0;
  if (!path.startsWith('/')) return undefined;
  const digits = path.slice(1);
  if (digits.length === 0 || digits.length > 5 || [...digits].some((c) => c < '0' || c > '9')) return undefined;
  return Number(digits) <= 65535 ? Number(digits) : undefined;
}

function refusal(url: string, mode = 'single'): CoordinationConfigError | undefined {
  try {
    coordinationSettings({ url, mode, sentinelName: 'm' });
    return undefined;
  } catch (err) {
    assert.ok(err instanceof CoordinationConfigError, String(err));
    return err;
  }
}

describe('review: lh-coordination refuses a URL path that is not a database number', function () {
  const validate = editorDefinition('lh-coordination').defaults.url.validate;
  const editorAccepts = (url: string): boolean => validate?.call({}, url) === true;

  it('over 3,000 seeded paths: a database number is read as that database, anything else is refused (runtime and editor)', function () {
    const rng = new Rng(32_0003);
    const pieces = ['/', '0', '1', '2', '9', '15', '65535', '65536', '99999', '-', '+', 'a', 'x', '.', '..', '%32', '00', 'e3'];
    for (let run = 0; run < 3000; run++) {
      let path = rng.chance(0.8) ? '/' : '';
      const n = rng.int(0, 4);
      for (let i = 0; i < n; i++) path += rng.pick(pieces);
      path = path.trim();
      if (path !== '' && !path.startsWith('/')) continue; // not a path: the host would swallow it
      const url = `redis://127.0.0.1:6379${path}`;
      const want = expected(path);
      const err = refusal(url);
      if (want === undefined) {
        assert.ok(err, `accepted ${url}`);
        assert.equal(err.field, 'url');
        assert.match(err.message, /^lh-coordination url: .*database number from 0 to 65535/, url);
        assert.equal(editorAccepts(url), false, `editor accepts ${url}`);
      } else {
        assert.equal(err, undefined, `refused ${url}: ${err?.message}`);
        assert.equal(coordinationSettings({ url }).database, want, url);
        assert.equal(editorAccepts(url), true, `editor refuses ${url}`);
      }
    }
  });

  it('the cases of the report: /abc, /1x, /-1, /99999 refused; /0, /2, /65535 and none accepted', function () {
    for (const path of ['/abc', '/1x', '/-1', '/99999', '/1/2', '/2/']) assert.ok(refusal(`redis://127.0.0.1:6379${path}`), path);
    for (const [path, db] of [
      ['', 0],
      ['/', 0],
      ['/0', 0],
      ['/2', 2],
      ['/65535', 65535],
    ] as const)
      assert.equal(coordinationSettings({ url: `rediss://redis.lab:6380${path}` }).database, db, path);
  });

  it('sentinel: every URL names the same database, and the connection selects it; cluster: database 0 only', function () {
    assert.match(
      refusal('redis://a:26379/2, redis://b:26379/3', 'sentinel')?.message ?? '',
      /^lh-coordination url: every URL names the same database/,
    );
    assert.match(
      refusal('redis://a:7000/1, redis://b:7001/1', 'cluster')?.message ?? '',
      /^lh-coordination url: Redis Cluster has database 0 only/,
    );
    assert.equal(refusal('redis://a:7000, redis://b:7001/0', 'cluster'), undefined);
    const settings = coordinationSettings({
      url: 'redis://127.0.0.1:1/3, redis://127.0.0.1:2/3',
      mode: 'sentinel',
      sentinelName: 'm',
    });
    const redis = connectRedis(settings, {}) as Redis;
    try {
      redis.on('error', () => undefined);
      assert.equal(redis.options.db, 3);
    } finally {
      redis.disconnect();
    }
  });
});
