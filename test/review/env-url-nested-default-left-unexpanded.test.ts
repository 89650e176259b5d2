/**
 * Review finding: `${NAME:-default}` in lh-server's URLs. A default that itself refers to a variable, as a shell
 * user writes it (`http://${LH_HOST:-${HOSTNAME}}:8090`), was cut at its first `}`: with LH_HOST unset the URL became
 * `http://${HOSTNAME}:8090` with the reference left in as text, which a URL parser takes as a host named `${hostname}`:
 * the instrument showed as unreachable instead of the promised error naming the field. A `${` inside a default (or
 * anywhere left over after expansion) is now refused, naming the field and the rule.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { EnvUrlError, expandEnvUrl } from '../../src/nodes/lh-server/env-url';

describe('review: lh-server URLs with a reference inside a default', function () {
  it('a nested reference is refused naming the field, whether the outer variable is set or not', function () {
    for (const env of [{}, { LH_HOST: '10.0.0.5' }]) {
      const lookup = (n: string): string | undefined => (env as Record<string, string>)[n];
      assert.throws(
        () => expandEnvUrl('baseUrl', 'http://${LH_HOST:-${HOSTNAME}}:8090', lookup),
        (err: Error) => err instanceof EnvUrlError && /^baseUrl: /.test(err.message) && /default/.test(err.message),
      );
    }
  });

  it('property: an expanded URL never holds "${" unless a variable\'s value put it there', function () {
    const name = fc.constantFrom('A', 'B', 'LH_HOST');
    const piece = fc.oneof(
      fc.constantFrom('http://', ':', '/', '}', '{', '$', '-', 'x', '8090'),
      name.map((n) => `\${${n}}`),
      fc.tuple(name, fc.constantFrom('', 'h', '${B', '${B}', '$x')).map(([n, d]) => `\${${n}:-${d}}`),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), fc.dictionary(name, fc.constantFrom('', 'v', 'w')), (parts, env) => {
        const text = parts.join('');
        let out: string;
        try {
          out = expandEnvUrl('baseUrl', text, (n) => env[n]);
        } catch (err) {
          assert.ok(err instanceof EnvUrlError && err.message.startsWith('baseUrl: '));
          return;
        }
        assert.ok(!out.includes('${'), `${text} → ${out}`);
      }),
    );
  });
});
