import assert from 'node:assert/strict';

import { LhError } from '../../src/client';
import {
  applyPoll,
  applyPush,
  classifyPollResults,
  newPollMemory,
  nextDelay,
  offlineAfterOf,
  pendingOnly,
  PollRules,
  SourceResult,
  sourcesOf,
  statusAfter,
} from '../../src/nodes/lh-error-poll/poll-decisions';
import { newWatch, Source } from '../../src/nodes/lh-error-poll/seen-errors';

type Rec = { id?: string; uuid?: string; severity?: string };

const rules: PollRules<Rec> = {
  baseMs: 1000,
  offlineAfter: 2,
  keyOf: (source: Source, r: Rec) => (source === 'A' ? r.id : r.uuid),
  wanted: (r) => r.severity !== 'Info',
};
const noJitter = (): number => 0;
/** The server's connection state as a poll reads it: nothing unanswered. */
const answering = { failures: 0, offlineAfter: 2 };
const down = (source: Source = 'A'): SourceResult<Rec> => ({
  source,
  error: new LhError('no answer', { kind: 'network', operation: 'check-for-pending-errors' }),
});
const refusedLogin = (): SourceResult<Rec> => ({
  source: 'A',
  error: new LhError('login refused', { kind: 'auth', operation: 'authenticate', statusCode: 401 }),
});
const listA = (...ids: string[]): SourceResult<Rec> => ({ source: 'A', records: ids.map((id) => ({ id })) });

describe('poll decisions', function () {
  it('raises each listed error once and resolves it once when it is gone', function () {
    const watch = newWatch();
    const memory = newPollMemory();
    const first = applyPoll(watch, memory, [listA('1', '2')], rules, answering, noJitter);
    assert.deepEqual(
      first.raised.map((r) => r.record.id),
      ['1', '2'],
    );
    assert.equal(first.changed, true);
    const again = applyPoll(watch, memory, [listA('1', '2')], rules, answering, noJitter);
    assert.equal(again.raised.length, 0);
    assert.equal(again.changed, false);
    const gone = applyPoll(watch, memory, [listA('2')], rules, answering, noJitter);
    assert.deepEqual(
      gone.resolved.map((r) => (r.record as Rec).id),
      ['1'],
    );
    assert.deepEqual(gone.status, { kind: 'pending', count: 1 });
    assert.equal(applyPoll(watch, memory, [listA('2')], rules, answering, noJitter).resolved.length, 0);
  });

  it('does not raise an error the severity filter leaves out, nor an id it reported resolved', function () {
    const watch = newWatch();
    const memory = newPollMemory();
    const out = applyPoll(
      watch,
      memory,
      [{ source: 'A', records: [{ id: 'x', severity: 'Info' }, { id: 'y' }] }],
      rules,
      answering,
      noJitter,
    );
    assert.deepEqual(
      out.raised.map((r) => r.record.id),
      ['y'],
    );
    applyPoll(watch, memory, [listA()], rules, answering, noJitter);
    assert.equal(applyPoll(watch, memory, [listA('y')], rules, answering, noJitter).raised.length, 0);
  });

  it('backs off from the server state once offline, and a failed source keeps the other source', function () {
    const watch = newWatch();
    const memory = newPollMemory();
    applyPoll(watch, memory, [listA()], rules, answering, noJitter);
    const one = applyPoll(watch, memory, [listA('1'), down('B')], rules, { failures: 1, offlineAfter: 2 }, noJitter);
    assert.equal(one.raised.length, 1);
    assert.equal(one.status.kind, 'unreachable');
    assert.equal(one.delayMs, 1000);
    assert.equal(applyPoll(watch, memory, [down()], rules, { failures: 2, offlineAfter: 2 }, noJitter).delayMs, 2000);
    assert.equal(applyPoll(watch, memory, [down()], rules, { failures: 3, offlineAfter: 2 }, noJitter).delayMs, 4000);
    assert.equal(applyPoll(watch, memory, [listA('1')], rules, answering, noJitter).delayMs, 1000);
  });

  it('a refused login is neither offline nor online, is logged once and backs off from the first refusal', function () {
    const watch = newWatch();
    const memory = newPollMemory();
    const first = applyPoll(watch, memory, [refusedLogin()], rules, answering, noJitter);
    assert.equal(first.status.kind, 'refused');
    assert.equal(first.warn, 'login refused');
    assert.equal(first.delayMs, 4000);
    const second = applyPoll(watch, memory, [refusedLogin()], rules, answering, noJitter);
    assert.equal(second.warn, undefined);
    assert.equal(second.delayMs, 8000);
    assert.equal(watch.connection, 'unknown');
    const ok = applyPoll(watch, memory, [listA()], rules, answering, noJitter);
    assert.equal(ok.warn, undefined);
    assert.equal(ok.delayMs, 1000, 'the first steady delay takes the one-off phase shift (0 with this random)');
    assert.equal(
      applyPoll(watch, memory, [refusedLogin()], rules, answering, noJitter).warn,
      'login refused',
      'logged again after a good poll',
    );
  });

  it('shortens the first steady delay once, then keeps the interval exact', function () {
    const memory = newPollMemory();
    const watch = newWatch();
    assert.equal(applyPoll(watch, memory, [listA()], rules, answering, () => 0.5).delayMs, 950);
    assert.equal(applyPoll(watch, memory, [listA()], rules, answering, () => 0.5).delayMs, 1000);
  });

  it('backs off while offline and returns to the interval when online', function () {
    assert.equal(nextDelay(1000, 0, 1, 2, false, noJitter), 1000);
    assert.equal(nextDelay(1000, 0, 2, 2, false, noJitter), 2000);
    assert.equal(nextDelay(1000, 0, 3, 2, false, noJitter), 4000);
    assert.equal(
      nextDelay(1000, 0, 3, 2, false, () => 0.999),
      4400,
    );
    assert.equal(
      nextDelay(1000, 0, 0, 2, false, () => 0.999),
      1000,
    );
  });

  it('classifies 5xx, network and timeout failures as unreachable and everything else as a refusal', function () {
    const err = (kind: 'http' | 'network' | 'timeout' | 'auth', statusCode?: number): SourceResult<Rec> => ({
      source: 'A',
      error: new LhError(kind, { kind, operation: 'x', statusCode }),
    });
    const c = classifyPollResults([
      err('http', 503),
      err('network'),
      err('timeout'),
      err('http', 404),
      err('auth', 401),
      listA('1'),
    ]);
    assert.equal(c.unreachable.length, 3);
    assert.deepEqual(
      c.refused.map((e) => e.statusCode),
      [404, 401],
    );
    assert.equal(c.listed.length, 1);
  });

  it('statusAfter shows a refusal first, then a failed source, else the pending count', function () {
    const failed = { source: 'A' as const, error: new LhError('x', { kind: 'network', operation: 'x' }) };
    assert.deepEqual(statusAfter({ unreachable: [], refused: [] }, 3), { kind: 'pending', count: 3 });
    assert.equal(statusAfter({ unreachable: [failed], refused: [] }, 3).kind, 'unreachable');
    assert.equal(statusAfter({ unreachable: [failed], refused: [failed.error] }, 3).kind, 'refused');
  });

  describe('pushes', function () {
    it('an error pushed first is not raised again by the poll that lists it, and is resolved by the poll', function () {
      const watch = newWatch();
      const memory = newPollMemory();
      const pushed = applyPush(watch, { source: 'A', raised: [{ id: '7' }] }, rules);
      assert.deepEqual(
        pushed.raised.map((r) => r.record.id),
        ['7'],
      );
      assert.equal(applyPush(watch, { source: 'A', raised: [{ id: '7' }] }, rules).raised.length, 0);
      assert.equal(applyPoll(watch, memory, [listA('7')], rules, answering, noJitter).raised.length, 0);
      assert.equal(applyPoll(watch, memory, [listA()], rules, answering, noJitter).resolved.length, 1);
      assert.equal(
        applyPush(watch, { source: 'A', raised: [{ id: '7' }] }, rules).raised.length,
        0,
        'resolved ids stay resolved',
      );
    });

    it('a pushed resolution is reported once, and the poll does not report it again', function () {
      const watch = newWatch();
      const memory = newPollMemory();
      applyPoll(watch, memory, [listA('8')], rules, answering, noJitter);
      assert.equal(applyPush(watch, { source: 'A', resolved: ['8'] }, rules).resolved.length, 1);
      assert.equal(applyPush(watch, { source: 'A', resolved: ['8'] }, rules).resolved.length, 0);
      assert.equal(applyPoll(watch, memory, [listA()], rules, answering, noJitter).resolved.length, 0);
    });

    it('errors on a push-only channel are never resolved by a poll', function () {
      const watch = newWatch();
      const memory = newPollMemory();
      assert.equal(applyPush(watch, { source: 'A', channel: 'dialogs', raised: [{ id: 'd1' }] }, rules).raised.length, 1);
      assert.equal(applyPoll(watch, memory, [listA()], rules, answering, noJitter).resolved.length, 0);
      assert.equal(applyPush(watch, { source: 'A', channel: 'dialogs', resolved: ['d1'] }, rules).resolved.length, 1);
    });

    it('the severity filter applies to pushes too', function () {
      assert.equal(applyPush(newWatch(), { source: 'A', raised: [{ id: 'i', severity: 'Info' }] }, rules).raised.length, 0);
    });
  });

  it('reads the source choice, the offline threshold and the pending records of a list', function () {
    assert.deepEqual(sourcesOf('both'), ['A', 'B']);
    assert.deepEqual(sourcesOf('B'), ['B']);
    assert.deepEqual(sourcesOf(undefined), ['A']);
    assert.equal(offlineAfterOf('4'), 4);
    assert.equal(offlineAfterOf(0), 3);
    assert.equal(offlineAfterOf(1.5), 3);
    assert.deepEqual(pendingOnly([{ id: 1 }, null, 'x', { id: 2, handled: true }, { id: 3, handled: false }]), [
      { id: 1 },
      { id: 3, handled: false },
    ]);
  });
});
