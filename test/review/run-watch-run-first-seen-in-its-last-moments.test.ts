/**
 * Review finding (fix86, item 7): lh-run-watch takes as a run's record only one the instrument did not list when the
 * watch first saw the run (an older record never counts). That list is read after the poll that first saw the run.
 * A run first seen in its last moments (a short run, a poll late on a busy machine, a run aborted right after its
 * first sight) ended, and left its record, between that poll and the list: its own record was in the list, so it was
 * never taken, and output 2 said no `runId` and a result guessed from the states. Now the status is read once more
 * after the list: when the run no longer goes on, a listed record may be its own, and is then known by the run's own
 * start time alone (never one starting before the run: an older record still never counts), when no new one shows.
 *
 * Against the simulator over HTTP: the run is aborted as the watch lists the records, whose answer waits until the
 * abort has left its record.
 */
import assert from 'node:assert/strict';

import { matchRecord, type TrackedRun } from '../../src/nodes/runs/run-decisions';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { recordRunWatch, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
const BUSY_MS = 20000;

describe('review: lh-run-watch, a run first seen in its last moments', function () {
  this.timeout(60000);
  const sim = useInstrument({ simulator: { simulationSpeed: 20 } });
  afterEach(function () {
    sim.clearFaults();
    restartMemory();
  });

  const received: Record<string, Msg[]> = {};
  const recordReads = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/run-data').length;

  it('ended while its first sight listed the records: output 2 carries its own record', async function () {
    const f = runWatchFlow(sim, { interval: '0.5', progressInterval: '0', listen: false });
    await helper.load(runWatchModules(), f.nodes, f.credentials);
    recordRunWatch(received);
    await until(() => received.states?.length === 1, 'the first state', BUSY_MS);
    const older = sim.runs.records.all.length;

    // the list read at the run's first sight: the run is aborted as it comes, and the answer waits for its record
    let held = false;
    const off = sim.onRequest((entry) => {
      if (held || entry.method !== 'GET' || entry.path !== '/api/v1/run-data') return;
      held = true;
      sim.setFaults({ latencyMs: 1500 }); // read right after this listener: it applies to this request only
      sim.runs.abort();
    });
    try {
      sim.runs.create({ protocolId: 1 }, 'admin');
      await until(() => sim.runs.state === 'Loading', 'Loading', BUSY_MS);
      sim.runs.loadComplete({ protocolId: 1 });
      await until(() => held, 'the records listed at first sight', BUSY_MS);
    } finally {
      off();
    }
    sim.clearFaults();
    await until(() => sim.runs.records.all.length === older + 1, "the aborted run's record", BUSY_MS);
    await until(() => received.finished.length === 1, 'the finished run', BUSY_MS);
    const [done] = received.finished;
    const own = sim.runs.records.all.find((r) => r.runResult === 'Aborted');
    assert.ok(own, 'the simulator wrote the run record');
    assert.equal(done.runId, own.id, `output 2 names its record (reads of run-data: ${recordReads()})`);
    assert.equal(done.result, 'aborted');
  });

  it('the record is then known by the run start: one starting before the run is never taken', function () {
    const run: TrackedRun = {
      protocolId: 1,
      protocolName: 'Demo',
      startTime: '2026-03-01T10:00:03.000Z',
      firstSeenAt: 0,
      states: ['Running'],
      priorRecordIds: ['earlier', 'own'],
      priorRecordsUnsure: true,
    };
    // a run aborted at once and started again 3 s later: the first one's record starts 3 s before this run
    const earlier = { id: 'earlier', protocolName: 'Demo', startTime: '2026-03-01T10:00:00Z' };
    assert.equal(matchRecord([earlier], run), undefined, 'an older record never counts');
    const own = { id: 'own', protocolName: 'Demo', startTime: '2026-03-01T10:00:03Z' };
    assert.equal(matchRecord([own, earlier], run)?.id, 'own');
    // a new record (written after the list) is the run's own as ever; a listed one never counts when the list is sure
    const fresh = { id: 'fresh', protocolName: 'Demo', startTime: '2026-03-01T10:00:03Z' };
    assert.equal(matchRecord([fresh, own, earlier], run)?.id, 'fresh');
    assert.equal(matchRecord([own, earlier], { ...run, priorRecordsUnsure: undefined }), undefined);
  });
});
