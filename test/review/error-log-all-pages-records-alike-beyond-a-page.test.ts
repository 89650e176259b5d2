/**
 * Review (review89): lh-error-log's *All pages* skips a record whose identity (id, date, code, text, severity, type,
 * group) it read already: a record the history moved onto the next page while errors were raised. An instrument may
 * list records alike in a burst (an id reused, the same second, the same error of one group): those beyond the first
 * page were skipped as read, the reading ended at the last page, and the node sent a list short of them without a
 * word (`truncated` false). With the total steady nothing can have moved, so it now fails: the error names the offset,
 * reaches Catch, and nothing is sent. Real Node-RED against the simulator, the burst made at one instant.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { loadNode, useInstrument } from '../support/node-suite';
import { nextMessage } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('lh-error-log all pages: records alike beyond a page', function () {
  this.timeout(20000);
  const sim = useInstrument();

  it('fails with a clear error, reaching Catch, rather than send a list short of them', async function () {
    sim.injectPendingError({ title: 'before the burst' });
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.parse('2026-11-30T10:00:00Z') });
    try {
      const first = sim.injectPendingError({ id: 'fw-7', code: 7, groupId: 'g1', title: 'Clot' });
      for (let i = 0; i < 4; i++) sim.injectPendingError({ id: first.id, code: 7, groupId: 'g1', title: 'Clot', shareId: true });
    } finally {
      clock.uninstall();
    }
    assert.equal(sim.state.history.length, 6);
    const node = await loadNode(sim, {
      id: 'history',
      type: 'lh-error-log',
      operation: 'list',
      allPages: true,
      offset: '0',
      offsetType: 'num',
      limit: '2',
      limitType: 'num',
    });
    const sent: Msg[] = [];
    node.out.on('input', (m: Msg) => sent.push(m));
    const answered = Promise.race([
      nextMessage(node.out).then((msg) => ({ msg, failed: false })),
      nextMessage(node.caught).then((msg) => ({ msg, failed: true })),
    ]);
    node.node.receive({ topic: 'history' });
    const { msg, failed } = await answered;
    const items = failed ? [] : ((msg.payload as Msg).items as Msg[]);
    assert.ok(failed, `sent ${items.length} of the 6 records, truncated ${String(msg.truncated)}, without a word`);
    const err = msg._error as Msg;
    assert.match(String(err.message), /list-errors: the instrument returned the same errors again for offset \d+/);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent, [], 'nothing sent');
  });
});
