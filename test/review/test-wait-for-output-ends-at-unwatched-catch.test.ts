/**
 * Review (timing95, the tests themselves): nextMessage() on a node's output waited without a bound. When the node
 * failed instead (its failure went to the flow's Catch node, which the test did not watch), the wait ended only at the
 * test's timeout, saying nothing: on a busy CI machine such a failure (a slow first request refused, a deadline met)
 * read as a 20 s mocha timeout. Now nextMessage() rejects at once naming the failure the Catch node got, unless the
 * test watches the Catch node itself (collect(), nextMessage() there, before or after).
 */
import assert from 'node:assert/strict';

import { loadNode, useInstrument } from '../support/node-suite';
import { collect, nextMessage } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: a test waiting for an output hears of a failure at an unwatched Catch node', function () {
  this.timeout(15000);
  const sim = useInstrument();
  const load = () =>
    loadNode(sim, { id: 'data', type: 'lh-run-data', operation: 'report' }, { only: ['lh-server', 'lh-run-data'] });

  it('the wait for the output rejects at once, naming the field and the rule of the failure', async function () {
    const node = await load();
    const started = Date.now();
    const out = nextMessage(node.out);
    node.node.receive({}); // no msg.runId: refused, to the Catch node
    await assert.rejects(out, (err: Error) => {
      assert.match(err.message, /expected a msg at helper node 'out'; the Catch node got a failure instead/);
      assert.match(err.message, /runId is required/);
      return true;
    });
    // not the test's timeout (15 s): a hang net, the rejection is the Catch node's own msg
    assert.ok(Date.now() - started < 10_000);
  });

  it('a test that watches the Catch node gets the failure there; the wait for the output is left alone', async function () {
    const node = await load();
    const caught = collect(node.caught);
    const out = nextMessage(node.out);
    let settled = false;
    out.then(
      () => (settled = true),
      () => (settled = true),
    );
    node.node.receive({});
    const failed = await nextMessage(node.caught);
    assert.match(String((failed._error as Msg).message), /runId is required/);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(caught.length, 1);
    assert.equal(settled, false, 'the output wait is not decided by a failure the test watches');
  });

  it('a race of the output against the Catch node set up after it: the Catch node wins, nothing rejects', async function () {
    const node = await load();
    const out = nextMessage(node.out);
    const caught = nextMessage(node.caught);
    let rejected = false;
    out.catch(() => (rejected = true));
    node.node.receive({});
    const first = await Promise.race([out, caught]);
    assert.match(String((first._error as Msg).message), /runId is required/);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(rejected, false);
  });
});
