/**
 * Review finding: apply echoed a plan's `instrument` into its refusal as given: a plan edited by hand (or pasted) with
 * `http://user:password@host` put the password into msg.error, the log and every debug sidebar, and one of a million
 * characters made an error message of a million characters. plan only ever writes the lh-server's URL (checked: http
 * or https, no user name or password, no query or fragment), so apply now takes only such a URL, of at most 2048
 * characters, and shows it without what it must not have; nothing is sent either way. Nor one with a line break, a
 * control or format character (a bidi override) inside, which the URL parser takes (dropping line breaks and tabs)
 * and the refusal then showed as given: a forged line in the log.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: lh-protocol plan.instrument never echoed with a password, nor unbounded', function () {
  const sim = useInstrument();
  const { load } = configuredNode(sim, { id: 'protocol', type: 'lh-protocol' }, { only: ['lh-server', 'lh-protocol'] });

  it('refuses a plan whose instrument holds a password or is not a URL plan gives, without echoing it', async function () {
    const node = await load({ operation: 'msg', protocolId: '' });
    const plan = (await node.run({ operation: 'plan', protocolId: 1, payload: { steps: [] } })).plan as Msg;
    const before = sim.requests.length;
    for (const instrument of [
      'http://admin:s3cret-pw@lh-2.example:8080',
      'admin:s3cret-pw@lh-2.example',
      `http://lh-2.example/${'a'.repeat(1_000_000)}`,
      'http://lh-2.example/api?token=s3cret-pw',
    ]) {
      const err = await node.expectFailure(
        { operation: 'apply', plan: { ...plan, instrument } },
        'plan.instrument',
        /instrument/,
      );
      const text = JSON.stringify(err);
      assert.doesNotMatch(text, /s3cret-pw/);
      assert.ok(text.length < 4000, `an error of ${text.length} characters`);
    }
    // a line break, a control or a bidi override inside (the URL parser drops line breaks and tabs, and took it): the
    // refusal named the instrument as given, a forged line in the log
    for (const instrument of [
      'http://lh-2.example/\n[error] [lh-server:sim] admin password changed by forged-line',
      'http://lh-2.example/\tforged-line',
      'http://lh-2.example/\u202eforged-line',
      'http://lh-2.example/\u0000forged-line',
    ]) {
      const err = await node.expectFailure(
        { operation: 'apply', plan: { ...plan, instrument } },
        'plan.instrument',
        /instrument/,
      );
      assert.doesNotMatch(String(err.message), /forged-line/);
      assert.doesNotMatch(String(err.message), /[\p{Cc}\p{Cf}]/u);
    }
    assert.equal(sim.requests.length, before, 'nothing sent');
    // the plan as made still applies
    assert.ok(['applied', 'unchanged'].includes((await node.run({ operation: 'apply', plan })).outcome as string));
  });
});
