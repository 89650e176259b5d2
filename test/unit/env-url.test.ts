import assert from 'node:assert/strict';

import fc from 'fast-check';

import { expandEnvUrl, hasEnvReference, MAX_URL_TEXT } from '../../src/nodes/lh-server/env-url';

const EXAMPLE_A = 'http://${LH_SIM_HOST:-127.0.0.1}:${LH_SIM_PORT:-8090}';
const EXAMPLE_B = 'https://${LH_SIM_HOST:-127.0.0.1}:${LH_SIM_HTTPS_PORT:-8443}';

function env(vars: Record<string, string>): (name: string) => string | undefined {
  return (name) => (Object.prototype.hasOwnProperty.call(vars, name) ? vars[name] : undefined);
}

describe('lh-server URLs from the environment (env-url.ts)', function () {
  it("the examples' URLs: the simulator's defaults when nothing is set", function () {
    assert.equal(expandEnvUrl('baseUrl', EXAMPLE_A, env({})), 'http://127.0.0.1:8090');
    assert.equal(expandEnvUrl('instrumentUrl', EXAMPLE_B, env({})), 'https://127.0.0.1:8443');
  });

  it('a variable that is set wins over the default; an empty one takes the default (as the shell does)', function () {
    const vars = env({ LH_SIM_HOST: 'lab-7.local', LH_SIM_PORT: '', LH_SIM_HTTPS_PORT: '9443' });
    assert.equal(expandEnvUrl('baseUrl', EXAMPLE_A, vars), 'http://lab-7.local:8090');
    assert.equal(expandEnvUrl('instrumentUrl', EXAMPLE_B, vars), 'https://lab-7.local:9443');
  });

  it('${NAME} without a default and NAME unset: an error naming the field and the variable, never an empty host', function () {
    assert.throws(
      () => expandEnvUrl('baseUrl', 'http://${LAB_HOST}/NimbusLite', env({})),
      /^EnvUrlError: baseUrl: the environment variable LAB_HOST is not set/,
    );
    assert.equal(expandEnvUrl('baseUrl', 'http://${LAB_HOST}/NimbusLite', env({ LAB_HOST: 'x' })), 'http://x/NimbusLite');
  });

  it('a broken reference is refused with the rule; an over-long text is refused', function () {
    for (const text of ['http://${}:1', 'http://${1X}:1', 'http://${A-B}:1', 'http://${HOST:1']) {
      assert.throws(() => expandEnvUrl('baseUrl', text, env({})), /baseUrl: a \$\{\.\.\.\} that is not/, text);
    }
    assert.throws(() => expandEnvUrl('baseUrl', `http://h/${'a'.repeat(MAX_URL_TEXT)}`, env({})), /longer than 2048/);
  });

  it('text without a reference is left exactly as written (every existing flow keeps its URL)', function () {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }).filter((s) => !s.includes('${')),
        (text) => {
          assert.equal(hasEnvReference(text), false);
          assert.equal(expandEnvUrl('baseUrl', text, env({})), text);
        },
      ),
    );
  });

  it('any host and port from the environment lands in the URL, and a value is never expanded again', function () {
    const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/);
    fc.assert(
      fc.property(name, name, fc.string({ maxLength: 40 }), fc.integer({ min: 1, max: 65535 }), (h, p, host, port) => {
        fc.pre(h !== p);
        const vars = env({ [h]: host, [p]: String(port) });
        const url = expandEnvUrl('baseUrl', `http://\${${h}:-d}:\${${p}}`, vars);
        assert.equal(url, `http://${host === '' ? 'd' : host}:${port}`);
      }),
    );
  });
});
