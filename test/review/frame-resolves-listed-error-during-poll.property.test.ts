/**
 * Issue 31, review 101: settledByFrame decides with A's memory, which lags behind a poll that a frame asked for and
 * that is waiting or under way. Model-based, with polls in flight (the narrower model of
 * frames-without-poll.property.test.ts polls at once after a frame): an instrument whose error list and firmware
 * errors change at random (ids shared by both kinds, sources named or not, every change announced by its frame), a
 * watch wired as ErrorWatch wires the pure decisions (a frame that asks folds into the poll waiting, or into the one
 * follow-up of the poll in flight; the follow-up dropped when followUpNeeded says the answer showed what the frames
 * said), and polls that read the list at one step and are applied at a later one. Invariant: once the frames stop
 * and the polls they asked for have run (no safety-net poll), A's memory holds exactly what the instrument lists.
 *
 * The cases it found: a listed error pushed without a source (raised from its frame as a firmware error) or under the
 * id of an open firmware error, its poll's list read, then the listed error resolved: its resolution frame settled
 * the firmware error under the id and asked for no poll (A's memory did not hold the listed error yet), the poll
 * raised it from the list read before, dropped its follow-up, and the error stayed pending until the next safety-net
 * poll (an interval later; 60 s while backing off). And, an id held by a listed and a firmware error only in turn,
 * each msg once: a listed error pushed without a source (raised from its frame) and resolved while its poll was under
 * way was raised a second time by that poll's list, read before the resolution (withoutResolvedMeanwhile).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { ErrorFrame, PushedError } from '../../src/client';
import { applyPoll, newPollMemory, type PollRules, type SourceResult } from '../../src/nodes/lh-error-poll/poll-decisions';
import {
  adoptListed,
  applyErrorFrame,
  followUpNeeded,
  settledByFrame,
  UnpolledFrames,
  withoutResolvedMeanwhile,
} from '../../src/nodes/lh-error-poll/push-decisions';
import { newWatch } from '../../src/nodes/lh-error-poll/seen-errors';
import type { PolledError } from '../../src/nodes/shared/poll-messages';

const rules: PollRules<PolledError> = {
  baseMs: 5000,
  offlineAfter: 3,
  keyOf: (_source, record) => String((record as { id: string }).id),
  wanted: () => true,
};

type Step =
  | { kind: 'listRaise' | 'fwRaise'; id: string; title: string; named: boolean }
  | { kind: 'listResolve' | 'fwResolve'; id: string }
  /** the poll asked for starts: its request reads the list now */
  | { kind: 'start' }
  /** the poll under way is answered (with the list it read) and applied */
  | { kind: 'finish' }
  | { kind: 'noise' };

const ID = fc.constantFrom('1', '2');
const TITLE = fc.constantFrom('Tip pickup failed', 'Door open');
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom('listRaise' as const, 'fwRaise' as const), id: ID, title: TITLE, named: fc.boolean() }),
  fc.record({ kind: fc.constantFrom('listResolve' as const, 'fwResolve' as const), id: ID }),
  fc.constant({ kind: 'start' as const }),
  fc.constant({ kind: 'finish' as const }),
  fc.constant({ kind: 'start' as const }),
  fc.constant({ kind: 'finish' as const }),
  fc.constant({ kind: 'noise' as const }),
);

/** Each raise a new error (its time stamp tells it from an earlier one under the id and title). */
function record(id: string, title: string, source: 'service' | 'firmware', at: number): PushedError {
  return { id, title, message: '', severity: 'Error', errorResponses: [], source, timeStamp: `2026-12-01T00:00:${at}` };
}

class Instrument {
  readonly listed = new Map<string, PushedError>();
  readonly firmware = new Map<string, PushedError>();

  /** `apart`: an id is held by a listed and a firmware error one after the other, never by both at once */
  constructor(private readonly apart = false) {}

  apply(s: Step, at: number): ErrorFrame | undefined {
    switch (s.kind) {
      case 'listRaise': {
        if (this.listed.has(s.id) || (this.apart && this.firmware.has(s.id))) return undefined;
        const error = record(s.id, s.title, 'service', at);
        this.listed.set(s.id, error);
        return s.named
          ? { kind: 'raised', error, sourceNamed: true }
          : { kind: 'raised', error: { ...error, source: 'firmware' } };
      }
      case 'fwRaise': {
        if (this.firmware.has(s.id) || (this.apart && this.listed.has(s.id))) return undefined;
        const error = record(s.id, s.title, 'firmware', at);
        this.firmware.set(s.id, error);
        return s.named ? { kind: 'raised', error, sourceNamed: true } : { kind: 'raised', error };
      }
      case 'listResolve':
        return this.listed.delete(s.id) ? { kind: 'resolved', resolvedId: s.id } : undefined;
      case 'fwResolve':
        return this.firmware.delete(s.id) ? { kind: 'resolved', resolvedId: s.id } : undefined;
      default:
        return s.kind === 'noise' ? { kind: 'unrecognised', reason: 'a frame of another shape' } : undefined;
    }
  }

  list(): SourceResult<PolledError>[] {
    return [{ source: 'A', records: [...this.listed.values()].map((r) => ({ ...r }) as PolledError) }];
  }
}

/** The watch as ErrorWatch wires it: frames, the poll waiting, the one in flight and its follow-up. */
class Watch {
  readonly watch = newWatch();
  private readonly memory = newPollMemory();
  private readonly unpolled = new UnpolledFrames();
  private pending = false;
  private followUp = false;
  private inFlight?: { results: SourceResult<PolledError>[]; heard: ErrorFrame[]; requested: number };

  constructor(private readonly instrument: Instrument) {}

  frame(frame: ErrorFrame): void {
    const asks = !settledByFrame(this.watch, frame, rules, this.unpolled);
    if (asks) {
      this.unpolled.asked(frame, rules);
      if (this.inFlight) {
        this.inFlight.heard.push(frame);
        this.followUp = true;
      } else this.pending = true;
    }
    this.tell(applyErrorFrame(this.watch, frame, rules));
  }

  /** each msg as "raised|resolved id stamp" */
  readonly said: string[] = [];
  private tell(outcome: { raised: { record: PolledError }[]; resolved: { record: PolledError }[] }): void {
    for (const [kind, list] of [
      ['raised', outcome.raised],
      ['resolved', outcome.resolved],
    ] as const)
      for (const { record } of list) this.said.push(`${kind} ${record.id} ${String((record as PushedError).timeStamp)}`);
  }

  start(): void {
    if (!this.pending || this.inFlight) return;
    this.pending = false;
    this.inFlight = { requested: this.unpolled.requested(), results: this.instrument.list(), heard: [] };
  }

  finish(): void {
    const flight = this.inFlight;
    if (!flight) return;
    this.inFlight = undefined;
    if (!followUpNeeded(flight.heard, flight.results, rules)) this.followUp = false;
    const results = withoutResolvedMeanwhile(flight.results, flight.heard, this.watch, rules);
    adoptListed(this.watch, results, rules);
    this.tell(applyPoll(this.watch, this.memory, results, rules));
    this.unpolled.applied(flight.requested, results);
    if (this.followUp) this.pending = true;
    this.followUp = false;
  }

  /** The frames stopped: the polls they asked for run (no safety-net poll). */
  drain(): void {
    for (let i = 0; i < 10 && (this.pending || this.inFlight); i++) {
      this.finish();
      this.start();
    }
    assert.ok(!this.pending && !this.inFlight, 'the polls asked for come to an end');
  }
}

const seed = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;

describe('review 101: a resolution frame while the poll of its listed error is under way', function () {
  /** The steps played on a watch of a new instrument, then the polls they asked for. */
  function play(steps: Step[], apart: boolean): { instrument: Instrument; watch: Watch } {
    const instrument = new Instrument(apart);
    const watch = new Watch(instrument);
    steps.forEach((s, at) => {
      if (s.kind === 'start') return watch.start();
      if (s.kind === 'finish') return watch.finish();
      const frame = instrument.apply(s, at);
      if (frame) watch.frame(frame);
    });
    watch.drain();
    return { instrument, watch };
  }
  const runs = { seed, numRuns: process.env.LH_CASES ? Number(process.env.LH_CASES) : 5000 };

  it('model: once the frames stop and their polls ran, A holds exactly what the instrument lists', function () {
    console.log(`      in-flight frames seed: ${seed} (LH_SEED=${seed} replays it)`);
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const { instrument, watch } = play(steps, false);
        const held = watch.watch.sources.A.activeIds()
          .map((id) => `${id} ${String((watch.watch.sources.A.activeRecord(id) as PushedError).timeStamp)}`)
          .sort();
        const listed = [...instrument.listed.values()].map((e) => `${e.id} ${String(e.timeStamp)}`).sort();
        assert.deepEqual(held, listed);
      }),
      runs,
    );
  });

  it('model: each error raised and resolved once, an id held by a listed and a firmware error in turn', function () {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const { watch } = play(steps, true);
        assert.deepEqual([...new Set(watch.said)], watch.said, 'each msg once');
      }),
      runs,
    );
  });

  it('the case: a listed error pushed under an open firmware error id, resolved while its poll is under way', function () {
    const { watch } = play(
      [
        { kind: 'fwRaise', id: '1', title: 'Door open', named: true },
        { kind: 'listRaise', id: '1', title: 'Tip pickup failed', named: true },
        { kind: 'start' },
        { kind: 'listResolve', id: '1' },
        { kind: 'finish' },
      ],
      false,
    );
    assert.deepEqual(watch.watch.sources.A.activeIds(), [], 'the listed error is reported resolved without a safety-net poll');
  });
});
