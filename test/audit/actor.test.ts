import assert from 'assert';

import { currentActor, withActor } from '../../src/audit';
import { nodeActor, requestUser } from '../../src/nodes/shared/audit';

describe('audit: who acts', function () {
  it('an inner actor adds to the outer one across awaits (the answer inside a node)', async function () {
    const seen = await withActor({ node: 'n1', flow: 'f1' }, async () => {
      await new Promise((r) => setImmediate(r));
      return withActor({ signer: 'Kim', meaning: 'Retry' }, async () => {
        await Promise.resolve();
        return currentActor();
      });
    });
    assert.deepStrictEqual(seen, { node: 'n1', flow: 'f1', signer: 'Kim', meaning: 'Retry' });
    assert.strictEqual(currentActor(), undefined);
  });

  it('the editor user (adminAuth) and the http-in Basic user (httpNodeAuth) are named, the password never', function () {
    assert.strictEqual(requestUser({ user: { username: 'lab-admin', permissions: '*' } }), 'lab-admin');
    const basic = `Basic ${Buffer.from('operator1:s3cret-pw').toString('base64')}`;
    assert.strictEqual(requestUser({ headers: { authorization: basic } }, true), 'operator1');
    // nothing checked the header (no httpNodeAuth): it names nobody
    assert.strictEqual(requestUser({ headers: { authorization: basic } }), undefined);
    assert.strictEqual(requestUser({ headers: { authorization: 'Bearer abc' } }), undefined);
    assert.strictEqual(requestUser(undefined), undefined);
    const actor = nodeActor(
      { id: 'n9', type: 'lh-run', z: 'tab1' } as never,
      { _msgid: 'm', req: { headers: { authorization: basic } } } as never,
      true,
    );
    assert.deepStrictEqual(actor, { node: 'n9', nodeType: 'lh-run', flow: 'tab1', user: 'operator1' });
    assert.ok(!JSON.stringify(actor).includes('s3cret'));
  });
});
