/**
 * The colon form (`password: hunter2`) is redacted since review32, so a text that writes a secret-named field's name
 * and then a colon loses what follows. The package wrote two of its own messages that way: the instrument's
 * validation problem (its errors map written `newPassword: The new password must have at least 8 characters.`, as
 * the editor's Change password button shows it; the instrument's own `detail` repeats it so) and the audit log's
 * "no lhAudit.key: give it the key…" line. Both would have lost the reason a user needs; both now name the field
 * without a colon after it (a detail that only repeats a field's error is said once, from the errors map). Real
 * Node-RED, the simulator over HTTP.
 */
import assert from 'node:assert/strict';

import { AUDIT_KEY_MISSING } from '../../src/audit/redis-log';
import { redactText } from '../../src/contract/redaction';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode, USER } from '../support/runtime';

describe('review: redaction keeps the reason the instrument gives for a secret-named field', function () {
  const sim = useInstrument({ adminServer: true });

  beforeEach(async function () {
    const server = serverFlow(sim);
    await helper.load([...packageNodes(), tlsConfigNode], server.nodes, server.credentials);
  });

  it('Change password with a too short new one: the editor is told why, and gets no password back', async function () {
    sim.setUserPasswordExpired(USER.username, true);
    const res = await helper
      .request()
      .post('/lh-server/server/change-expired-password')
      .send({ newPassword: 'ab1' })
      .then((r) => ({ status: r.status, body: r.body as { error?: string } }));
    assert.notEqual(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.error ?? '', /at least \d+ characters/, JSON.stringify(res.body));
    assert.match(res.body.error ?? '', /newPassword/);
    assert.ok(!(res.body.error ?? '').includes(USER.password));
  });

  it('the audit line that asks for lhAudit.key keeps its instructions through the redaction step', function () {
    // src/audit/redis-log.ts: the text is a log line, which passes the redaction step (src/nodes/shared/node-log.ts)
    assert.equal(redactText(AUDIT_KEY_MISSING), AUDIT_KEY_MISSING);
  });
});
