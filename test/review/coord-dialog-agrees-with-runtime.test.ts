// Hostile review finding (first hour, Node-RED 4.1 and 5): the lh-coordination dialog checked Lease (s) only as "a
// number" and Key prefix with a regex of its own, and no Sentinel group or URL count against the mode. A lease of 0,
// 500 or -1, an empty Sentinel group in Sentinel mode, two URLs in "one Redis server" mode, a Cluster URL with a
// database number, all saved without a red triangle; on deploy the node refused to start ("lh-coordination
// leaseSeconds: a number of seconds from 1 to 120" in the log) and every lh-server pointing at it went without
// coordination. An empty Key prefix (the runtime's default, labwire) was marked invalid. Now each field's check is the
// runtime's own rule: the dialog accepts exactly what the node accepts, and says the field and the rule.
import assert from 'node:assert/strict';

import { CoordinationConfigError, coordinationSettings } from '../../src/coordination/config';
import { editorDefinition } from '../support/editor-definition';
import { Rng } from '../support/prng';

type Check = (this: unknown, v: unknown, opt?: unknown) => boolean | string;

const URL = 'redis://127.0.0.1:6379';

/** Whether the runtime refuses `config` because of `field`. */
function runtimeRefuses(config: Record<string, unknown>, field: string): boolean {
  try {
    coordinationSettings(config);
    return false;
  } catch (err) {
    assert.ok(err instanceof CoordinationConfigError, String(err));
    return err.field === field;
  }
}

describe('review: the lh-coordination dialog checks what the node checks', function () {
  const defaults = editorDefinition('lh-coordination').defaults;
  const dialog = (field: string, v: unknown, node: Record<string, unknown> = {}): boolean =>
    (defaults[field].validate as Check).call({ type: 'lh-coordination', _: (k: string) => k, ...node }, v) === true;
  const message = (field: string, v: unknown, node: Record<string, unknown> = {}): unknown =>
    (defaults[field].validate as Check).call({ type: 'lh-coordination', _: (k: string) => k, ...node }, v, {});

  it('Lease (s): a value the dialog accepts is one the node accepts, and the other way round (seeded)', function () {
    const seed = Number(process.env.LH_SEED ?? 5858);
    const rng = new Rng(seed);
    const values: unknown[] = ['', '0', '0.5', '1', '5', '120', '120.5', '121', '500', '-1', 'abc', ' 7 ', '1e2', '1e3'];
    for (let i = 0; i < 200; i++) values.push(String(rng.int(-20, 300) / (rng.int(0, 1) === 0 ? 1 : 4)));
    for (const v of values) {
      const accepted = !runtimeRefuses({ url: URL, leaseSeconds: v }, 'leaseSeconds');
      assert.equal(
        dialog('leaseSeconds', v),
        accepted,
        `seed ${seed}: lease ${JSON.stringify(v)}: the node ${accepted ? 'accepts' : 'refuses'} it`,
      );
    }
    assert.equal(dialog('leaseSeconds', '500'), false, 'a lease of 500 s is refused by the node when it starts');
    assert.equal(message('leaseSeconds', '0'), 'lh-coordination.label.leaseSeconds: a number of seconds from 1 to 120');
  });

  it('Key prefix: empty takes the default, as in the node; the rule is named', function () {
    for (const v of ['', 'labwire', 'lab-2:a.b_c', ' lab ', 'a b', 'lab/1', 'x'.repeat(64), 'x'.repeat(65), 'pré']) {
      const accepted = !runtimeRefuses({ url: URL, prefix: v }, 'prefix');
      assert.equal(dialog('prefix', v), accepted, `prefix ${JSON.stringify(v)}: the node ${accepted ? 'accepts' : 'refuses'} it`);
    }
    assert.match(String(message('prefix', 'a b')), /^lh-coordination\.label\.prefix: letters, digits/);
  });

  it('Sentinel group: required in Sentinel mode only', function () {
    assert.equal(dialog('sentinelName', '', { mode: 'sentinel' }), false);
    assert.match(String(message('sentinelName', ' ', { mode: 'sentinel' })), /sentinelName: is required in sentinel mode/);
    assert.equal(dialog('sentinelName', 'mymaster', { mode: 'sentinel' }), true);
    assert.equal(dialog('sentinelName', '', { mode: 'single' }), true);
    assert.equal(dialog('sentinelName', '', { mode: 'cluster' }), true);
  });

  it('Redis URL: the number of URLs and the database number as the mode allows', function () {
    const cases: [string, string, boolean][] = [
      ['redis://a:6379, redis://b:6379', 'single', false],
      ['redis://a:26379, redis://b:26379', 'sentinel', true],
      ['redis://a:7000 redis://b:7000', 'cluster', true],
      ['redis://a:7000/2', 'cluster', false],
      ['redis://a:6379/2', 'single', true],
      ['redis://a:6379/2, redis://b:6379/3', 'sentinel', false],
    ];
    for (const [url, mode, accepted] of cases) {
      assert.equal(runtimeRefuses({ url, mode, sentinelName: 'g' }, 'url'), !accepted, `runtime: ${url} (${mode})`);
      assert.equal(dialog('url', url, { mode }), accepted, `dialog: ${url} (${mode})`);
    }
    assert.match(String(message('url', 'redis://a:6379, redis://b:6379', { mode: 'single' })), /one URL only/);
  });
});
