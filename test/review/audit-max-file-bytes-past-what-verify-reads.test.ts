/**
 * `lhAudit.maxFileBytes` was taken as given. A chain file is read whole, as one string, by `lh-audit verify` and by
 * Node-RED when it reopens the chain; V8 makes no string of 512 MiB or more ("Cannot create a string longer than
 * 0x1fffffe8 characters"). With 1 GiB files (or a value that is no number: the file never rotates) the chain, once its
 * file passed 512 MiB, could not be verified, and the next start refused every request of the instrument. The setting
 * must be refused at the deploy with a message naming it and its bound, and nothing sent.
 */
import assert from 'node:assert/strict';

import { auditMaxFileBytes, MAX_FILE_BYTES_LIMIT } from '../../src/audit';
import { useAuditDir } from '../audit/chain-support';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, nextMessage, runtimeSettings, serverFlow } from '../support/runtime';

describe('audit: lhAudit.maxFileBytes past what a chain file can be read as', function () {
  it('a whole number of bytes from 1 to 256 MiB is taken; anything else is refused, naming the setting and its bound', function () {
    for (const ok of [undefined, 1, 1200, 64 * 1024 * 1024, MAX_FILE_BYTES_LIMIT]) assert.equal(auditMaxFileBytes(ok), ok);
    assert.equal(MAX_FILE_BYTES_LIMIT, 256 * 1024 * 1024);
    for (const bad of [1024 ** 3, MAX_FILE_BYTES_LIMIT + 1, 0, -1, 1.5, NaN, Infinity, '64MB', null, '1e6']) {
      assert.throws(
        () => auditMaxFileBytes(bad),
        /^Error: lhAudit\.maxFileBytes in settings\.js must be a whole number of bytes from 1 to 268435456 \(256 MiB/,
        String(bad),
      );
    }
  });

  describe('in Node-RED', function () {
    const sim = useInstrument();
    const audit = useAuditDir(runtimeSettings);

    it('1 GiB files: the lh-server node logs why, a request is refused to Catch, nothing is sent', async function () {
      runtimeSettings({ lhAudit: { dir: audit.dir(), key: 'node-test-key', maxFileBytes: 1024 ** 3 } });
      const server = serverFlow(sim, { withB: false });
      await loadFlow(
        [
          ...server.nodes,
          { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
          { id: 'out', type: 'helper' },
          { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
          { id: 'caught', type: 'helper' },
        ],
        server.credentials,
      );
      const spies = helper as unknown as { log(): { args: { level?: unknown; msg?: unknown }[][] } };
      const logged = spies
        .log()
        .args.map((a) => a[0])
        .filter((m) => m?.level === 20 && /lhAudit\.maxFileBytes/.test(String(m.msg)));
      assert.equal(logged.length, 1, 'the lh-server node logs the setting refused');
      const caught = nextMessage(helper.getNode('caught'));
      helper.getNode('clear').receive({ payload: 1 });
      assert.match(String(((await caught).error as { message: string }).message), /lhAudit\.maxFileBytes/);
      assert.equal(sim.requests.filter((r) => r.path === '/api/v1/errors/clear-errors').length, 0, 'nothing sent');
    });
  });
});
