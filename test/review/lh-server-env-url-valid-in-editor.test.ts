// Review 41, the first hour: the README says any lh-server URL may use `${NAME}` and `${NAME:-default}`, which the
// lh-server expands when it starts (and Test connection accepts them). The edit dialog's check did not know them: a
// Base URL of `${LAB_A_URL}` or `${LAB_A_URL:-http://192.168.1.20/NimbusLite}` got the red triangle "Enter an http://
// or https:// URL" and Deploy asked to confirm invalid nodes, though the node ran. Seeded cases built from the
// spellings an env URL can take: whenever the runtime's rules accept the URL once expanded (each variable with a
// default at its default, the others set), the dialog accepts what was written; a URL the runtime refuses whatever the environment
// (no scheme, user:password@, a query) is still refused by the dialog.
import assert from 'node:assert/strict';

import { checkUrls } from '../../src/client/url-checks';
import { expandEnvUrl } from '../../src/nodes/lh-server/env-url';
import { editorDefinition } from '../support/editor-definition';
import { Rng } from '../support/prng';

type Check = (this: unknown, v: unknown, opt?: unknown) => boolean | string;

describe('review 41: lh-server URLs with environment variables in the edit dialog', function () {
  const defaults = editorDefinition('lh-server').defaults;
  const node = { id: 'srv', type: 'lh-server', allowInsecureInstrument: false, _: (k: string) => k };
  const dialogSays = (field: 'baseUrl' | 'instrumentUrl', v: string): boolean | string =>
    (defaults[field].validate as Check).call(node, v, {});

  /** What the lh-server makes of the text: the URL error it reports, or '' when it accepts it. */
  function runtimeSays(field: 'baseUrl' | 'instrumentUrl', text: string, env: Record<string, string>): string {
    try {
      const url = expandEnvUrl(field, text, (name) => env[name]);
      checkUrls(field === 'baseUrl' ? { baseUrl: url } : { baseUrl: 'http://127.0.0.1', instrumentUrl: url });
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  }

  it('accepts the README forms that the lh-server runs with', function () {
    for (const v of [
      '${LAB_A_URL}',
      '${LAB_A_URL:-http://192.168.1.20/NimbusLite}',
      'http://${LH_SIM_HOST:-127.0.0.1}:${LH_SIM_PORT:-8090}',
      'http://${HOST}/NimbusLite',
    ])
      assert.equal(dialogSays('baseUrl', v), true, v);
    assert.equal(dialogSays('instrumentUrl', '${LAB_B_URL:-https://192.168.1.21}'), true);
    assert.equal(dialogSays('instrumentUrl', 'https://${LH_SIM_HOST:-127.0.0.1}:${LH_SIM_HTTPS_PORT:-8443}'), true);
  });

  it('seeded spellings: whatever the lh-server accepts once expanded with the defaults, the dialog accepts as written', function () {
    const rng = new Rng(4141);
    const schemes = ['http://', 'https://', '${SCHEME:-http}://', '${SCHEME:-https}://'];
    const hosts = ['127.0.0.1', 'lab-a.example.org', '${HOST}', '${HOST:-10.0.0.7}', '[::1]'];
    const ports = ['', ':8090', ':${PORT}', ':${PORT:-8443}'];
    const paths = ['', '/NimbusLite', '/${PREFIX:-NimbusLite}'];
    const envs: Record<string, string>[] = [
      { SCHEME: 'https', HOST: '192.168.1.20', PORT: '443', PREFIX: 'p', WHOLE: 'https://192.168.1.20' },
      { HOST: 'lab-b', PORT: '8090', WHOLE: 'http://lab-b:8090' },
    ];
    let accepted = 0;
    for (let i = 0; i < 300; i++) {
      const whole = rng.chance(0.15);
      const text = whole
        ? rng.pick(['${WHOLE}', '${WHOLE:-https://10.0.0.9}', '${WHOLE}/NimbusLite'])
        : rng.pick(schemes) + rng.pick(hosts) + rng.pick(ports) + rng.pick(paths);
      for (const field of ['baseUrl', 'instrumentUrl'] as const) {
        // the dialog checks a URL as its defaults give it: the variables with a default are left unset
        const defaulted = new Set([...text.matchAll(/\$\{(\w+):-/g)].map((m) => m[1]));
        const asDefaults = (env: Record<string, string>): Record<string, string> =>
          Object.fromEntries(Object.entries(env).filter(([name]) => !defaulted.has(name)));
        const ran = envs.filter((env) => runtimeSays(field, text, asDefaults(env)) === '');
        if (ran.length === 0) continue;
        accepted++;
        assert.equal(dialogSays(field, text), true, `${field} ${text}: the lh-server runs with it, the dialog marks it invalid`);
      }
    }
    assert.ok(accepted > 100, `only ${accepted} accepted cases drawn`);
  });

  it('still refuses what the lh-server refuses whatever the environment', function () {
    const cases: [string, string][] = [
      ['ftp://127.0.0.1', 'lh-server.errors.url'],
      ['${LAB_A_URL:-127.0.0.1:8090}', 'lh-server.errors.url'],
      ['http://user:pw@${HOST:-lab}', 'lh-server.errors.userinfo'],
      ['http://${HOST:-lab}/x?key=1', 'lh-server.errors.query'],
      ['http://${HOST:-lab}/x#${FRAG:-a}', 'lh-server.errors.query'],
    ];
    for (const [v, key] of cases) assert.equal(dialogSays('baseUrl', v), key, v);
    assert.equal(dialogSays('instrumentUrl', 'http://${HOST:-lab}'), 'lh-server.errors.insecureB');
  });
});
