/**
 * Issue 17 point 2 (review 2): run record dates.
 * Review finding: run records with zone-less dates (the instrument's UTC, as instrumentDate() itself assumes) are
 * parsed as Node-RED's *local* time by recordSince() (lh-run start) and matchRecord() (lh-run-watch). On a host west
 * of UTC an old "Completed" record of the same protocol looks like it started just now: a start whose run went back
 * to Idle after load-complete (no new record) is reported `started`, and an aborted run is reported `completed`.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { RunStateName } from '../../src/client';
import { startRun } from '../../src/nodes/lh-run/start-run';
import { matchRecord, resultOf, TrackedRun } from '../../src/nodes/runs/run-decisions';
import { runControl, runStatus, startOptions } from './start-run.support';

/** "2026-11-24T17:00:00" : an instrument UTC date without a zone (like the observed "0001-01-01T00:00:00"). */
function zoneLess(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '');
}

describe("run records: zone-less dates are the instrument's UTC, and an old record is no evidence (review 2)", function () {
  const savedTz = process.env.TZ;
  before(() => {
    process.env.TZ = 'America/New_York'; // a lab in the US: Node-RED's local time is UTC-5
  });
  after(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  it('lh-run start (confirm loading): a run back at Idle with no record of its own is not "started" because of a 2-hour-old completed record', async function () {
    const served: RunStateName[] = ['Loading', 'Idle'];
    let i = 0;
    const api = runControl({
      status: async () => runStatus(served[Math.min(i++, served.length - 1)]),
      // the previous run of P1, two hours ago, completed; the deck check of this one failed and left no record
      listRunData: async () => [
        { id: 'old-run', protocolName: 'P1', startTime: zoneLess(Date.now() - 2 * 3600_000), runResult: 'Completed' },
      ],
    });
    let outcome: string | undefined;
    try {
      outcome = (await startRun(api, startOptions({ confirmLoading: true }))).outcome;
    } catch {
      outcome = 'failed';
    }
    assert.equal(outcome, 'failed', 'an old record of another run is no evidence that this run started');
  });

  it('lh-run-watch: a run aborted while Scheduling is not "completed" because of a 2-hour-old completed record', function () {
    const now = Date.now();
    const run = {
      protocolId: 1,
      protocolName: 'P1',
      startTime: null,
      firstSeenAt: now - 3000,
      states: ['Scheduling', 'Aborting', 'Idle'] as RunStateName[],
    };
    const record = matchRecord(
      [{ id: 'old-run', protocolName: 'P1', startTime: zoneLess(now - 2 * 3600_000), runResult: 'Completed' }],
      run,
    );
    assert.equal(resultOf(record, run.states).result, 'aborted');
  });

  it('lh-run-watch: the record of this very run (same instant, zone-less) is found', function () {
    const start = Date.UTC(2026, 10, 24, 17, 0, 0);
    const run = {
      protocolId: 1,
      protocolName: 'P1',
      startTime: new Date(start).toISOString(),
      firstSeenAt: start,
      states: ['Running', 'Idle'] as RunStateName[],
    };
    const record = matchRecord([{ id: 'r1', protocolName: 'P1', startTime: zoneLess(start), runResult: 'Completed' }], run);
    assert.equal(record?.id, 'r1');
  });
  it("lh-run start (create, no run id in the create answer): an instrument clock 10 min ahead makes the previous run's completed record count as this run's", async function () {
    const served: RunStateName[] = ['Idle', 'Scheduling', 'Loading', 'Idle'];
    let i = 0;
    const skew = 10 * 60_000;
    const api = runControl({
      status: async () => runStatus(served[Math.min(i++, served.length - 1)]),
      createRun: async () => ({}), // the real create answer's shape is not documented: no run id
      // the previous run of P1 started 4 minutes ago (instrument clock: +10 min) and completed; this one left no record
      listRunData: async () => [
        {
          id: 'previous',
          protocolName: 'P1',
          startTime: new Date(Date.now() + skew - 4 * 60_000).toISOString(),
          runResult: 'Completed',
        },
      ],
    });
    let outcome: string | undefined;
    try {
      outcome = (await startRun(api, startOptions({ protocol: { id: 1 } }))).outcome;
    } catch {
      outcome = 'failed';
    }
    assert.equal(outcome, 'failed', 'the record of an earlier run is no evidence that this run started');
  });
});

describe('property: any zone of Node-RED, any instrument clock skew up to ±1 h — an old record never counts', function () {
  const savedTz = process.env.TZ;
  afterEach(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });
  const zones = fc.constantFrom(
    'UTC',
    'America/New_York',
    'America/Los_Angeles',
    'Pacific/Honolulu',
    'Europe/Berlin',
    'Asia/Tokyo',
    'Pacific/Kiritimati',
    'Asia/Kolkata',
  );
  const skew = fc.integer({ min: -3600_000, max: 3600_000 });
  /** how an instrument writes a date: zone-less (its UTC), with Z, or with an offset */
  const style = fc.constantFrom('zoneless', 'z', 'offset');
  function written(ms: number, how: string): string {
    const iso = new Date(ms).toISOString();
    if (how === 'z') return iso;
    if (how === 'zoneless') return iso.replace(/\.\d{3}Z$/, '');
    return new Date(ms + 2 * 3600_000).toISOString().replace(/\.\d{3}Z$/, '+02:00');
  }
  /** old records: up to 3 h before now on the instrument's clock, or even ahead of it (a clock set back since) */
  const oldRecords = fc.array(
    fc.record({
      age: fc.integer({ min: -3600_000, max: 3 * 3600_000 }),
      how: style,
      result: fc.constantFrom('Completed', 'Success', 'Aborted'),
    }),
    { minLength: 1, maxLength: 5 },
  );

  it('lh-run start (confirm loading, and create without a run id): started only with a record new since load-complete', async function () {
    await fc.assert(
      fc.asyncProperty(
        zones,
        skew,
        oldRecords,
        fc.boolean(),
        fc.boolean(),
        style,
        async (tz, off, olds, confirming, withNew, how) => {
          process.env.TZ = tz;
          const now = Date.now();
          const listed = olds.map((o, i) => ({
            id: `old-${i}`,
            protocolName: 'P1',
            startTime: written(now + off - o.age, how === 'z' ? o.how : how),
            runResult: o.result,
          }));
          let loadCompleteSent = false;
          const served: RunStateName[] = confirming ? ['Loading', 'Idle'] : ['Idle', 'Scheduling', 'Loading', 'Idle'];
          let i = 0;
          const api = runControl({
            status: async () => runStatus(served[Math.min(i++, served.length - 1)]),
            loadComplete: async () => {
              loadCompleteSent = true;
              return {};
            },
            listRunData: async () =>
              loadCompleteSent && withNew
                ? [{ id: 'this-run', protocolName: 'P1', startTime: written(now + off, how), runResult: 'Completed' }, ...listed]
                : listed,
          });
          const result = await startRun(
            api,
            startOptions({ protocol: confirming ? undefined : { id: 1 }, confirmLoading: confirming }),
          ).then(
            (r) => r,
            () => undefined,
          );
          if (withNew) {
            assert.equal(result?.outcome, 'started');
            assert.equal(result?.runId, 'this-run');
          } else {
            assert.equal(result, undefined, `an old record made the start "${result?.outcome}" (${tz}, skew ${off} ms)`);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('lh-run-watch: the result comes only from a record new since the run was first seen; its own record is found', function () {
    fc.assert(
      fc.property(zones, skew, oldRecords, fc.boolean(), fc.boolean(), style, (tz, off, olds, withNew, withStart, how) => {
        process.env.TZ = tz;
        const now = Date.now();
        const listed = olds.map((o, i) => ({
          id: `old-${i}`,
          protocolName: 'P1',
          startTime: written(now + off - o.age, o.how),
          runResult: o.result,
        }));
        const startedAt = now + off - 60_000; // the instrument's clock
        const run: TrackedRun = {
          protocolId: 1,
          protocolName: 'P1',
          startTime: withStart ? new Date(startedAt).toISOString() : null,
          firstSeenAt: now - 60_000,
          states: ['Scheduling', 'Aborting'],
          priorRecordIds: listed.map((r) => r.id),
        };
        const own = { id: 'this-run', protocolName: 'P1', startTime: written(startedAt, how), runResult: 'Aborted' };
        const record = matchRecord(withNew ? [own, ...listed] : listed, run);
        assert.equal(record?.id, withNew ? 'this-run' : undefined);
        assert.equal(resultOf(record, run.states).result, 'aborted');
        // without the list of prior records, only the instrument's own start time can name the record
        const { priorRecordIds: _omit, ...unlisted } = run;
        const fallback = matchRecord(withNew ? [own, ...listed] : listed, unlisted);
        if (fallback)
          assert.ok(
            withStart && Math.abs(Date.parse(String(fallback.startTime).replace(/^(.*T[^Z+-]*)$/, '$1Z')) - startedAt) <= 5000,
          );
      }),
      { numRuns: 300 },
    );
  });
});
