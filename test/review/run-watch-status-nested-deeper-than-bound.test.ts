/**
 * Review (client: answer depth). Since the client refused every answer nested deeper than 128 levels, one deep field
 * in what the watching nodes read hid everything else in it, for as long as the instrument showed it: a run status
 * whose current step carries a value nested 300 levels (its settings as the instrument keeps them) made every poll of
 * lh-run-watch fail, so a run's states and its end were never reported; a run record nested so in the list of records
 * cost the finished run its record (result `unknown` for a completed run); one such pending error hid every error the
 * instrument listed from lh-error-poll (test/review/error-poll-deeply-nested-record-still-raised.test.ts). These reads
 * now keep the answer with the values that deep left out, said in their place (as the event frames are); a read the
 * user asks for (lh-run-data get, a protocol) is still refused.
 */
import assert from 'node:assert/strict';

import { TOO_DEEP } from '../../src/client/event-frames';
import { answerWith, pathOf, useAnswerProxy } from '../support/answer-proxy';
import { useInstrument } from '../support/node-suite';
import { recordRunWatch, runWatchFlow, runWatchModules } from '../support/run-watch-suite';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
const BUSY_MS = 20000;

/** `{"settings":{"settings":…{"leaf":true}…}}`, `depth` objects deep. */
function nested(depth: number): unknown {
  let value: unknown = { leaf: true };
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { settings: value } : [value];
  return value;
}

describe('review: lh-run-watch when the run status and records nest deeper than 128 levels', function () {
  const sim = useInstrument({ simulator: { simulationSpeed: 20 } });
  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, up, res) => {
      const path = pathOf(req);
      if (up.status !== 200 || !/\/protocol-run$|\/run-data$/.test(path)) return false;
      const body = JSON.parse(up.body.toString('utf8')) as unknown;
      if (Array.isArray(body)) for (const record of body as Msg[]) record.notes = nested(300);
      else (body as Msg).stepSettings = nested(300);
      answerWith(res, 200, { 'content-type': 'application/json' }, JSON.stringify(body));
      return true;
    },
  );

  it('reports the run running and completed, with its record, the deep values left out', async function () {
    this.timeout(60000);
    const quick = sim.addProtocol('Quick');
    sim.state.protocols
      .get(quick)!
      .steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 20 });
    const f = runWatchFlow(sim, { interval: '3600', progressInterval: '0', listen: false });
    const server = f.nodes.find((n) => n.id === 'server')!;
    server.baseUrl = proxy.url;
    await helper.load(runWatchModules(), f.nodes, f.credentials);
    const received: Record<string, Msg[]> = {};
    recordRunWatch(received);
    const watch = helper.getNode('watch');
    const poll = async (what: string, done: () => boolean): Promise<void> => {
      watch.receive({});
      await until(done, what, BUSY_MS);
    };
    await until(() => received.states.length === 1, 'the first state (Idle)', BUSY_MS);

    sim.runs.create({ protocolId: quick, simulate: true }, 'admin');
    await until(() => sim.runs.state === 'Loading', 'Loading', BUSY_MS);
    sim.runs.loadComplete({ protocolId: quick });
    await until(() => sim.runs.state === 'Running', 'Running', BUSY_MS);
    await poll('Running reported', () => received.states.some((m) => m.state === 'Running'));
    const running = received.states.find((m) => m.state === 'Running')!;
    assert.ok(JSON.stringify(running).includes(TOO_DEEP), 'the deep value is said to be left out');
    const recordReads = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/run-data').length;
    await until(() => recordReads() === 1, 'the records listed at first sight', BUSY_MS);

    await until(() => sim.runs.state === 'Idle', 'the run completed', BUSY_MS);
    await poll('the run reported finished', () => received.finished.length > 0);
    assert.equal(received.finished.length, 1);
    assert.equal(received.finished[0].result, 'completed', 'from its record');
    assert.equal(received.finished[0].runId, sim.runs.records.all[0].id);
  });
});
