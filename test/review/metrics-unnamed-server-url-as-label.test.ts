/**
 * Review finding: README ("Watching a lab") promises that no URL is ever a metrics label. The instrument label is the
 * lh-server node's name, and an lh-server without a name is called by its base URL as written (lh-server.ts
 * displayName): the page served `lh_instrument_up{instrument="https://10.0.0.5:8443/NimbusLite?site=b"}`, query and
 * all. An instrument name that is a URL is now labelled by its host and port only.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LabMetrics } from '../../src/observe/metrics';

describe('review: metrics of an lh-server without a name', function () {
  it('property: no label value is a URL; an unnamed server is labelled by its host and port', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('http', 'https', 'HTTPS'),
        fc.constantFrom('10.0.0.5', 'nimbus.lab', '[::1]'),
        fc.constantFrom('', ':8443'),
        fc.constantFrom('', '/NimbusLite', '/a/b/?site=b', '/#x'),
        async (scheme, host, port, rest) => {
          const metrics = new LabMetrics(() => 0);
          try {
            const url = `${scheme}://${host}${port}${rest}`;
            metrics.observe({ instrumentKey: url, instrument: url, kind: 'connection', state: 'online' });
            const body = (await metrics.render()).body;
            assert.doesNotMatch(body, /instrument="[^"]*:\/\//, body);
            assert.match(body, new RegExp(`lh_instrument_up\\{instrument="${(host + port).replace(/[[\]]/g, '\\$&')}"\\} 1`));
          } finally {
            metrics.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
