import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { ErrorFrame, PushedError } from '../../src/client';
import { LhError } from '../../src/client';
import { applyPoll, newPollMemory, PollRules, SourceResult } from '../../src/nodes/lh-error-poll/poll-decisions';
import {
  adoptListed,
  adoptPushed,
  applyErrorFrame,
  forgetResolvedElsewhere,
  listenOf,
  MAX_OPEN_FIRMWARE,
  openFirmwareErrors,
  openFirmwareRecords,
  photoAhead,
  reactToSocket,
  resolveAnswered,
  type SocketState,
  withFirmwareErrors,
} from '../../src/nodes/lh-error-poll/push-decisions';
import { newWatch } from '../../src/nodes/lh-error-poll/seen-errors';
import type { PolledError } from '../../src/nodes/shared/poll-messages';

const rules: PollRules<PolledError> = {
  baseMs: 5000,
  offlineAfter: 3,
  keyOf: (source, record) => (source === 'A' ? String((record as { id: string }).id) : String((record as { uuid: string }).uuid)),
  wanted: (record) => (record as { severity?: string }).severity !== 'Warning',
};

function fw(id: string, source: 'firmware' | 'service' = 'firmware', severity = 'Error'): PushedError {
  return { id, title: `fault ${id}`, message: '', severity, errorResponses: [{ response: 'Retry' }], source } as PushedError;
}
const raised = (error: PushedError): ErrorFrame => ({ kind: 'raised', error });
const resolved = (id: string): ErrorFrame => ({ kind: 'resolved', resolvedId: id });
const listA = (...ids: string[]): SourceResult<PolledError>[] => [{ source: 'A', records: ids.map((id) => fw(id, 'service')) }];
const ids = (list: { record: PolledError }[]): string[] => list.map((r) => String((r.record as { id: string }).id));

describe('lh-error-poll push decisions', function () {
  it('asks for the deck photo ahead only for a listed error pushed that the poll will raise (issue 31)', function () {
    const watch = newWatch();
    assert.equal(photoAhead(watch, raised(fw('s1', 'service')), rules), true, 'new, wanted: photo at the frame');
    assert.equal(photoAhead(watch, raised(fw('s2', 'service', 'Warning')), rules), false, 'not reported: no photo');
    assert.equal(photoAhead(watch, raised(fw('f1')), rules), false, 'firmware: raised from the frame, its photo then');
    assert.equal(photoAhead(watch, resolved('s1'), rules), false);
    assert.equal(photoAhead(watch, { kind: 'unrecognised', reason: 'x' }, rules), false);
    applyPoll(watch, newPollMemory(), listA('s1'), rules);
    assert.equal(photoAhead(watch, raised(fw('s1', 'service')), rules), false, 'raised already: the same frame again');
    applyPoll(watch, newPollMemory(), listA(), rules);
    assert.equal(photoAhead(watch, raised(fw('s1', 'service')), rules), false, 'resolved: remembered, not raised again');
    const reused = { ...fw('s1', 'service'), title: 'another fault' } as PushedError;
    assert.equal(photoAhead(watch, raised(reused), rules), true, 'another error under a reused id is raised: photo');
  });

  it('a photo ahead is asked exactly for the frames whose poll then raises the error (any order of frames and polls)', function () {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('frame' as const), id: fc.constantFrom('a', 'b', 'c'), warn: fc.boolean() }),
      fc.record({ kind: fc.constant('poll' as const), ids: fc.subarray(['a', 'b', 'c']) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const watch = newWatch();
        const memory = newPollMemory();
        for (const s of steps) {
          if (s.kind === 'poll') {
            applyPoll(watch, memory, listA(...s.ids), rules);
            continue;
          }
          const error = fw(s.id, 'service', s.warn ? 'Warning' : 'Error');
          const ahead = photoAhead(watch, raised(error), rules);
          // the poll that follows the frame, listing the pushed error as pushed: raises it iff a photo was asked
          const probe = newWatch();
          probe.sources.A.restore(watch.sources.A.snapshot());
          const outcome = applyPoll(probe, newPollMemory(), [{ source: 'A', records: [error] }], rules);
          assert.equal(ahead, outcome.raised.length === 1, `frame ${s.id} (${error.severity}): photo ${ahead}`);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('raises a firmware error once from its frame, and resolves it once from its resolution frame', function () {
    const watch = newWatch();
    assert.deepEqual(ids(applyErrorFrame(watch, raised(fw('f1')), rules).raised), ['f1']);
    assert.deepEqual(applyErrorFrame(watch, raised(fw('f1')), rules).raised, [], 'the same frame again raises nothing');
    assert.equal(openFirmwareErrors(watch), 1);
    assert.deepEqual(ids(applyErrorFrame(watch, resolved('f1'), rules).resolved), ['f1']);
    assert.deepEqual(applyErrorFrame(watch, resolved('f1'), rules).resolved, [], 'resolved once');
    assert.deepEqual(applyErrorFrame(watch, raised(fw('f1')), rules).raised, [], 'a resolved id is not raised again');
  });

  it('a new holder adopts the firmware errors another replica raised, silently, and resolves them from their frame', function () {
    const watch = newWatch();
    applyPoll(watch, newPollMemory(), listA('a1'), rules);
    const elsewhere = [
      { source: 'A', record: fw('f1') },
      { source: 'A', record: fw('s1', 'service') }, // a listed error: the poll and the sweep own it
      { source: 'A', record: { ...fw('a1'), title: 'fault a1' } }, // the list's own error under its id
      { source: 'B', record: fw('b1') },
    ];
    assert.equal(adoptPushed(watch, elsewhere, rules), true);
    assert.equal(openFirmwareErrors(watch), 1, 'only the firmware error of source A');
    assert.equal(adoptPushed(watch, elsewhere, rules), false, 'adopted once');
    assert.deepEqual(applyErrorFrame(watch, raised(fw('f1')), rules).raised, [], 'its frame again raises nothing');
    assert.deepEqual(ids(applyErrorFrame(watch, resolved('f1'), rules).resolved), ['f1'], 'its resolution frame resolves it');
    assert.equal(adoptPushed(watch, elsewhere, rules), false, 'resolved here: a stale entry of the shared memory stays out');
  });

  it('forgets, silently, the firmware errors another replica reported resolved; only the very error', function () {
    const watch = newWatch();
    applyErrorFrame(watch, raised(fw('f1')), rules);
    applyErrorFrame(watch, raised(fw('f2')), rules);
    const f2again = { ...fw('f2'), title: 'fault f2, pushed again' };
    applyErrorFrame(watch, raised(f2again), rules); // the id reused here: the f2 another replica resolved is over already
    const gone = [
      { source: 'A', record: fw('f1') },
      { source: 'A', record: fw('f2') },
      { source: 'A', record: fw('s1', 'service') },
      { source: 'B', record: fw('f1') },
    ];
    assert.equal(forgetResolvedElsewhere(watch, gone, rules), true);
    assert.deepEqual(
      openFirmwareRecords(watch).map((r) => (r as { title: string }).title),
      ['fault f2, pushed again'],
      'f1 forgotten; the newer error under f2 stays',
    );
    assert.deepEqual(
      applyErrorFrame(watch, raised(fw('f1')), rules).raised,
      [],
      'f1 is remembered as over: its frame again raises nothing',
    );
    assert.equal(forgetResolvedElsewhere(watch, gone, rules), false, 'once');
  });

  it('a stale entry of the shared memory never replaces the error this replica has under its id', function () {
    const watch = newWatch();
    const newer = { ...fw('f1'), title: 'fault f1, pushed again' };
    applyErrorFrame(watch, raised(fw('f1')), rules);
    applyErrorFrame(watch, raised(newer), rules); // the id reused: the first one is over
    assert.equal(adoptPushed(watch, [{ source: 'A', record: fw('f1') }], rules), false);
    assert.deepEqual(
      openFirmwareRecords(watch).map((r) => (r as { title: string }).title),
      ['fault f1, pushed again'],
      'the newer error is still the open one',
    );
  });

  it('leaves service errors, unknown frames and resolutions of listed errors to the poll', function () {
    const watch = newWatch();
    assert.equal(applyErrorFrame(watch, raised(fw('s1', 'service')), rules).changed, false);
    assert.equal(applyErrorFrame(watch, { kind: 'unrecognised', reason: 'x' }, rules).changed, false);
    applyPoll(watch, newPollMemory(), listA('a1'), rules);
    assert.equal(applyErrorFrame(watch, resolved('a1'), rules).changed, false, 'only the poll resolves a listed error');
    assert.equal(watch.sources.A.size, 1);
  });

  it('keeps the severity filter for firmware errors', function () {
    const watch = newWatch();
    assert.deepEqual(applyErrorFrame(watch, raised(fw('w1', 'firmware', 'Warning')), rules).raised, []);
  });

  it('never raises twice an error both pushed as firmware and listed by the poll, in either order', function () {
    // pushed first (a frame without a source reads as firmware), listed afterwards
    const watch = newWatch();
    assert.equal(applyErrorFrame(watch, raised(fw('x')), rules).raised.length, 1);
    adoptListed(watch, listA('x'), rules);
    const poll = applyPoll(watch, newPollMemory(), listA('x'), rules);
    assert.deepEqual(poll.raised, []);
    assert.equal(openFirmwareErrors(watch), 0, 'it moved to the memory of A');
    const gone = applyPoll(watch, newPollMemory(), listA(), rules);
    assert.deepEqual(ids(gone.resolved), ['x'], 'and its resolution is the poll’s, once');

    // listed first, pushed afterwards
    const other = newWatch();
    applyPoll(other, newPollMemory(), listA('y'), rules);
    assert.deepEqual(applyErrorFrame(other, raised(fw('y')), rules).raised, []);
  });

  it('raises a firmware error pushed under the id of a resolved listed error that was another error (a reused id)', function () {
    const watch = newWatch();
    applyPoll(watch, newPollMemory(), [{ source: 'A', records: [{ ...fw('7', 'service'), title: 'Tip pickup failed' }] }], rules);
    applyPoll(watch, newPollMemory(), listA(), rules); // resolved
    const door = { ...fw('7'), title: 'Door open during run' };
    assert.deepEqual(ids(applyErrorFrame(watch, raised(door), rules).raised), ['7'], 'a new error: raised');
    assert.deepEqual(applyErrorFrame(watch, raised(door), rules).raised, [], 'once');
    // the listed error itself pushed again (same title): the poll's, not raised from the frame
    const same = newWatch();
    applyPoll(same, newPollMemory(), [{ source: 'A', records: [{ ...fw('8', 'service'), title: 'Clot' }] }], rules);
    applyPoll(same, newPollMemory(), listA(), rules);
    assert.deepEqual(applyErrorFrame(same, raised({ ...fw('8'), title: 'Clot' }), rules).raised, []);
  });

  it('a listed error pushed too, its severity in the frame’s own word, is still the one error (never raised twice)', function () {
    const watch = newWatch();
    const listed = { ...fw('5', 'service', 'Fatal'), title: 'Low volume' };
    applyPoll(watch, newPollMemory(), [{ source: 'A', records: [listed] }], rules);
    assert.deepEqual(applyErrorFrame(watch, raised({ ...fw('5', 'firmware', 'Error'), title: 'Low volume' }), rules).raised, []);
    // pushed first, listed afterwards
    const other = newWatch();
    assert.equal(
      applyErrorFrame(other, raised({ ...fw('6', 'firmware', 'Error'), title: 'Low volume' }), rules).raised.length,
      1,
    );
    const list: SourceResult<PolledError>[] = [
      { source: 'A', records: [{ ...fw('6', 'service', 'Fatal'), title: 'Low volume' }] },
    ];
    adoptListed(other, list, rules);
    assert.deepEqual(applyPoll(other, newPollMemory(), list, rules).raised, []);
  });

  it('an open firmware error is not taken over by a listed error that reuses its id; the listed one is raised by the poll', function () {
    const watch = newWatch();
    applyErrorFrame(watch, raised({ ...fw('9'), title: 'Pressure fault' }), rules);
    const listed: SourceResult<PolledError>[] = [{ source: 'A', records: [{ ...fw('9', 'service'), title: 'Clot detected' }] }];
    adoptListed(watch, listed, rules);
    assert.equal(openFirmwareErrors(watch), 1, 'the firmware error stays open');
    assert.deepEqual(ids(applyPoll(watch, newPollMemory(), listed, rules).raised), ['9'], 'the listed error is raised');
  });

  it(`holds at most ${MAX_OPEN_FIRMWARE} open firmware errors: the oldest are forgotten, said in the outcome, never raised again`, function () {
    const watch = newWatch();
    let dropped = 0;
    for (let i = 0; i < MAX_OPEN_FIRMWARE + 20; i++) dropped += applyErrorFrame(watch, raised(fw(`f${i}`)), rules).dropped ?? 0;
    assert.equal(openFirmwareErrors(watch), MAX_OPEN_FIRMWARE);
    assert.equal(dropped, 20);
    assert.deepEqual(
      applyErrorFrame(watch, raised(fw('f0')), rules).raised,
      [],
      'a forgotten error pushed again is not raised twice',
    );
    assert.deepEqual(ids(applyErrorFrame(watch, resolved(`f${MAX_OPEN_FIRMWARE + 19}`), rules).resolved), [
      `f${MAX_OPEN_FIRMWARE + 19}`,
    ]);
  });

  it('does not resolve a firmware error because a poll does not list it', function () {
    const watch = newWatch();
    applyErrorFrame(watch, raised(fw('f1')), rules);
    for (let i = 0; i < 3; i++) {
      adoptListed(watch, listA(), rules);
      assert.deepEqual(applyPoll(watch, newPollMemory(), listA(), rules).resolved, []);
    }
    assert.equal(openFirmwareErrors(watch), 1);
  });

  it('resolves a firmware error once this Node-RED answered it (answer ledger), and only that one', function () {
    const watch = newWatch();
    applyErrorFrame(watch, raised(fw('f1')), rules);
    applyErrorFrame(watch, raised(fw('f2')), rules);
    assert.equal(resolveAnswered(watch, () => false, rules).changed, false);
    assert.deepEqual(ids(resolveAnswered(watch, (k) => k === 'f2', rules).resolved), ['f2']);
    assert.deepEqual(resolveAnswered(watch, (k) => k === 'f2', rules).resolved, []);
    assert.equal(openFirmwareErrors(watch), 1);
  });

  it('counts open firmware errors in the pending status, not in the others', function () {
    const watch = newWatch();
    applyErrorFrame(watch, raised(fw('f1')), rules);
    assert.deepEqual(withFirmwareErrors({ kind: 'pending', count: 2 }, watch), { kind: 'pending', count: 3 });
    const refused = {
      kind: 'refused' as const,
      error: new LhError('login refused', { kind: 'auth', operation: 'authenticate' }),
    };
    assert.deepEqual(withFirmwareErrors(refused, watch), refused);
  });

  it('polls on every connect, tells of open firmware errors after an outage, says "unavailable" once', function () {
    assert.deepEqual(reactToSocket('connecting', 'connected', 2, false), {
      state: 'connected',
      pollNow: true,
      paced: true,
      logUnavailable: false,
      openAfterOutage: 0,
    });
    assert.deepEqual(reactToSocket('disconnected', 'connected', 2, false).openAfterOutage, 2);
    assert.equal(reactToSocket('connected', 'disconnected', 2, false).pollNow, false);
    assert.equal(reactToSocket('connecting', 'unavailable', 0, false).logUnavailable, true);
    assert.equal(reactToSocket('connecting', 'unavailable', 0, true).logUnavailable, false);
  });

  it('a reconnect polls at once; the first connect (or a socket another node holds open) polls paced with the deploy', function () {
    const states: SocketState[] = ['connecting', 'connected', 'disconnected', 'unavailable'];
    for (const previous of states) {
      const r = reactToSocket(previous, 'connected', 0, false);
      assert.equal(r.pollNow, true, previous);
      // a deploy of 1,000 nodes joining open sockets must not poll in one burst; a socket that was down must not wait
      assert.equal(r.paced, previous === 'connecting', previous);
    }
  });

  it('a listed error the adoption of a pushed one puts out of place (a reused id) is reported resolved, once', function () {
    const watch = newWatch();
    const door = { ...fw('1', 'service'), title: 'Door open' } as PushedError;
    applyPoll(watch, newPollMemory(), [{ source: 'A', records: [door] }], rules);
    // the instrument ends Door open without a frame and reuses its id for an error it pushes without a source
    const tip = fw('1');
    assert.deepEqual(ids(applyErrorFrame(watch, raised(tip), rules).raised), ['1'], 'raised from its frame');
    const results: SourceResult<PolledError>[] = [{ source: 'A', records: [{ ...tip, source: 'service' }] }];
    adoptListed(watch, results, rules);
    const outcome = applyPoll(watch, newPollMemory(), results, rules);
    assert.deepEqual(
      outcome.resolved.map((r) => r.record.title),
      ['Door open'],
      'the displaced error is over',
    );
    assert.deepEqual(outcome.raised, [], 'the adopted one is not raised again');
    assert.deepEqual(applyPoll(watch, newPollMemory(), results, rules).resolved, [], 'once');
  });

  it('listens unless switched off', function () {
    assert.equal(listenOf(undefined), true);
    assert.equal(listenOf(true), true);
    assert.equal(listenOf(false), false);
    assert.equal(listenOf('false'), false);
  });
});
