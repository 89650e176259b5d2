/**
 * Review (observed-instrument.md: firmware errors arrive on `instincterrors` only; "the exact error-frame shape: not
 * documented"). A frame lh-error-poll could not read as an error (its data a bare text, an object without id, title or
 * message) changed nothing and was said nowhere: had it carried a firmware error, the error was dropped without a
 * trace (the poll it triggers lists service errors only). Such a frame is now said once in the log, with why and its
 * code; frames the node reads, and a frame listing no error, are not.
 */
import assert from 'node:assert/strict';

import { bServerFlow, pollNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';
import { firmwareFrame } from './firmware-id-reuse.support';

type Msg = Record<string, unknown>;
type LogCall = { level: number; msg: unknown };

function said(key = 'frameNotRead'): string[] {
  return (helper as unknown as { log(): { args: LogCall[][] } })
    .log()
    .args.map((a) => String(a[0].msg))
    .filter((m) => m.startsWith(`lh-error-poll.log.${key}`));
}

describe('review: an instincterrors frame not read as an error is said once', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  /** A poll node listening on the instrument's errors socket, once the socket is open: the msgs it raises. */
  async function watching(): Promise<Msg[]> {
    const server = bServerFlow(sim, { withB: false });
    await loadFlow(
      [...server.nodes, pollNode([['raised'], [], []], { interval: 60 }), { id: 'raised', type: 'helper' }],
      server.credentials,
    );
    const raised: Msg[] = collect(helper.getNode('raised'));
    await until(() => sim.eventSocketInfo.counts.errors > 0, 'the errors socket', 15000);
    return raised;
  }

  it('a text frame and an empty object are said once; known frames and an empty list are not', async function () {
    const raised = await watching();
    const before = said().length;
    // read: an error, and a list of none
    sim.publishRawFrame('errors', firmwareFrame({ id: 'fw-1', title: 'Pressure fault', source: 'Firmware' }));
    sim.publishRawFrame('errors', JSON.stringify({ code: 'RuntimeError', description: '', data: '[]' }));
    await until(() => raised.length === 1, 'the error raised', 10000);
    assert.equal(said().length, before, 'nothing said for frames the node reads');
    // not read: a bare text, then an object with nothing of an error
    sim.publishRawFrame('errors', JSON.stringify({ code: 'RuntimeError', description: '', data: 'Clot detected on channel 3' }));
    sim.publishRawFrame('errors', JSON.stringify({ code: 'Heartbeat' }));
    await until(() => said().length > before, 'the frame said', 10000);
    // the second frame is handled before a later known one is raised: nothing more said by then
    sim.publishRawFrame('errors', firmwareFrame({ id: 'fw-2', title: 'Pressure fault', source: 'Firmware' }));
    await until(() => raised.length === 2, 'the next error raised', 10000);
    assert.equal(said().length, before + 1, 'said once');
  });

  // review100: the errors of a list beyond the 500 read from one frame were said only through the one "not read" line
  // of the watch: once another frame had been said (a heartbeat), they were left out without a word
  it('errors of a list beyond the cap are said once, also after another frame was said', async function () {
    const raised = await watching();
    const [notRead, leftOut] = [said().length, said('frameLeftOut').length];
    sim.publishRawFrame('errors', JSON.stringify({ code: 'Heartbeat' }));
    await until(() => said().length > notRead, 'the heartbeat said', 10000);
    const list = (n: number, tag: string): string =>
      JSON.stringify({
        code: 'RuntimeError',
        description: '',
        data: Array.from({ length: n }, (_, i) => ({ id: `fw-${tag}-${i}`, title: 'Clot', source: 'Firmware' })),
      });
    sim.publishRawFrame('errors', list(501, 'a'));
    await until(() => said('frameLeftOut').length > leftOut, 'the errors left out said', 10000);
    await until(() => raised.length === 500, 'the first 500 raised', 20000);
    sim.publishRawFrame('errors', list(502, 'b'));
    await until(() => raised.length === 1000, 'the next 500 raised', 20000);
    assert.equal(said('frameLeftOut').length, leftOut + 1, 'said once');
    assert.equal(said().length, notRead + 1, 'the heartbeat alone said as not read');
  });
});
