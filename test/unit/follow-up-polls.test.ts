/**
 * Issue 31, the burst's follow-up polls: a frame heard while a poll's request is under way asks for one follow-up
 * poll (that request may have been answered before the frame's change). When the answer already shows what every
 * such frame said, the follow-up adds nothing and is dropped (in the 1,000-error burst 23 % of the errors came while
 * their instrument's safety-net poll was under way, and each cost a second poll); a follow-up asked for anything
 * else (a reconnect, a msg, a coordination change) always runs.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';

import type { ErrorFrame, PushedError } from '../../src/client';
import { LhError } from '../../src/client';
import type { PollRules, SourceResult } from '../../src/nodes/lh-error-poll/poll-decisions';
import { followUpNeeded } from '../../src/nodes/lh-error-poll/push-decisions';
import { PollLoop } from '../../src/nodes/shared/poll-loop';
import type { PolledError } from '../../src/nodes/shared/poll-messages';

const rules: Pick<PollRules<PolledError>, 'keyOf' | 'wanted'> = {
  keyOf: (_source, record) => String((record as { id: string }).id),
  wanted: () => true,
};

function err(id: string, title = `fault ${id}`, source: 'service' | 'firmware' = 'service'): PushedError {
  return { id, title, message: '', severity: 'Error', errorResponses: [], source } as PushedError;
}
const raised = (e: PushedError): ErrorFrame => ({ kind: 'raised', error: e });
const resolved = (id: string): ErrorFrame => ({ kind: 'resolved', resolvedId: id });
const listA = (...records: PushedError[]): SourceResult<PolledError>[] => [
  { source: 'A', records: records.map(({ source: _s, ...r }) => ({ ...r, severity: 'Error' }) as PolledError) },
];

describe('follow-up polls after frames heard during a poll (issue 31)', function () {
  it('dropped when the answer shows each frame: a raised error listed as pushed, a resolved one gone', function () {
    assert.equal(followUpNeeded([raised(err('1'))], listA(err('1')), rules), false);
    assert.equal(followUpNeeded([resolved('2')], listA(err('1')), rules), false);
    assert.equal(followUpNeeded([raised(err('1')), resolved('2')], listA(err('1')), rules), false);
    assert.equal(followUpNeeded([], listA(), rules), false, 'no frame: nothing asked for by frames');
  });

  it('kept when the answer predates a frame, or cannot tell', function () {
    assert.equal(followUpNeeded([raised(err('1'))], listA(), rules), true, 'answered before the error came');
    assert.equal(followUpNeeded([resolved('1')], listA(err('1')), rules), true, 'answered before its resolution');
    assert.equal(followUpNeeded([raised(err('1', 'new'))], listA(err('1', 'old')), rules), true, 'a reused id: another error');
    assert.equal(followUpNeeded([{ kind: 'unrecognised', reason: 'x' }], listA(), rules), true);
    assert.equal(followUpNeeded([raised(err('f', 'fw', 'firmware'))], listA(), rules), true, 'firmware: poll for the rest');
    const failed: SourceResult<PolledError>[] = [
      { source: 'A', error: new LhError('down', { kind: 'network', operation: 'check-for-pending-errors' }) },
    ];
    assert.equal(followUpNeeded([raised(err('1'))], failed, rules), true, 'A did not answer');
  });

  it('property: a dropped follow-up never misses a change a frame announced (the answer already holds the final state)', function () {
    // changes to the instrument's list during one poll request, each pushed as a frame (all heard); the answer is
    // the list at one moment of the request: changes after it are what a follow-up would find
    const change = fc.record({ id: fc.constantFrom('1', '2', '3'), raise: fc.boolean(), title: fc.constantFrom('a', 'b') });
    fc.assert(
      fc.property(fc.array(change, { maxLength: 12 }), fc.nat(), (changes, at) => {
        const list = new Map<string, PushedError>();
        const frames: ErrorFrame[] = [];
        const answerAt = at % (changes.length + 1);
        let answer: PushedError[] = [];
        changes.forEach((c, i) => {
          if (i === answerAt) answer = [...list.values()];
          if (c.raise) {
            list.set(c.id, err(c.id, c.title));
            frames.push(raised(err(c.id, c.title)));
          } else if (list.delete(c.id)) frames.push(resolved(c.id));
        });
        if (answerAt === changes.length) answer = [...list.values()];
        if (followUpNeeded(frames, listA(...answer), rules)) return;
        const titleIn = (l: PushedError[], id: string): string | undefined => l.find((e) => e.id === id)?.title;
        for (const f of frames) {
          const id = f.kind === 'raised' ? f.error.id : f.kind === 'resolved' ? f.resolvedId : '';
          assert.equal(titleIn(answer, id), list.get(id)?.title, `error ${id}: the answer shows its final state`);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a poll loop drops a follow-up asked for by frames only, never one asked for by anything else', async function () {
    const clock = FakeTimers.install({
      now: 0,
      toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'],
    });
    try {
      const starts: number[] = [];
      let during: (() => void) | undefined;
      const loop = new PollLoop(async () => {
        starts.push(Date.now());
        await new Promise((r) => setTimeout(r, 10));
        during?.();
        return 3_600_000;
      });
      loop.trigger();
      await clock.tickAsync(1);
      loop.trigger(true); // a frame during the request
      during = () => assert.equal(loop.dropFollowUp(), true);
      await clock.tickAsync(50);
      assert.deepEqual(starts, [0], 'the follow-up of the frame was dropped');

      during = () => assert.equal(loop.dropFollowUp(), false);
      loop.trigger();
      await clock.tickAsync(1);
      loop.trigger(true);
      loop.trigger(); // and a msg (or a reconnect): its follow-up runs whatever the answer shows
      await clock.tickAsync(50);
      assert.equal(starts.length, 3, 'the pinned follow-up ran');
      assert.equal(loop.dropFollowUp(), false, 'nothing to drop between polls');
      loop.stop();
    } finally {
      clock.uninstall();
    }
  });
});
