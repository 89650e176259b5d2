/**
 * Review (observed-instrument.md: websocket frames are JSON whose values may themselves be JSON inside strings,
 * several levels deep: unwrap recursively). The client unwrapped a JSON text inside a string only when it held an
 * object or an array: a value the instrument encoded as JSON once more on its own (`"viewId": "\"3fa8…\""`, as a
 * server that serialises every value of a frame does) kept its quotes. lh-dialog then sent close-view with the quoted
 * id (the instrument has no such dialog: 404, the dialog stays open), and a firmware error's id and title carried
 * them too. A JSON string inside a string is now read as its text, as the tested client's recursive unwrap does.
 *
 * Property over drawn frames (seeded: LH_SEED replays, LH_CASES draws more): an id and a title each JSON-encoded 0 to 3
 * times more, inside `data` encoded 0 to 2 times, keys camelCase or PascalCase: the event reads the id and the title
 * as sent before encoding. End to end: lh-events wired to lh-dialog closes a dialog whose frame encodes its id so.
 */
import assert from 'node:assert/strict';

import { eventFromFrame, firmwareErrorFromFrame } from '../../src/client/event-frames';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;

type Msg = Record<string, unknown>;

function encoded(value: unknown, times: number): unknown {
  let out = value;
  for (let i = 0; i < times; i++) out = JSON.stringify(out);
  return out;
}

const TITLES = ['Door open', 'Tip "A1" not picked up', 'Kanal 3: Gerinnsel', 'Pressure fault 42', '50% done', 'x'];

describe('review: frame values JSON-encoded once more on their own', function () {
  it(`reads ids and titles as sent (seed ${SEED}, ${CASES} cases)`, function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const id = rng.pick([`${rng.int(0, 0xffffff).toString(16)}ab${c}`, `fw-${c}`, `${c}`]);
      const title = rng.pick(TITLES);
      const pascal = rng.chance(0.5);
      const [k, m, j] = [rng.int(0, 3), rng.int(0, 3), rng.int(0, 2)];
      const key = (name: string): string => (pascal ? name[0].toUpperCase() + name.slice(1) : name);
      const data = { [key('id')]: encoded(id, k), [key('title')]: encoded(title, m), [key('source')]: 'Firmware' };
      const frame = JSON.stringify({ [key('code')]: 'RuntimeError', [key('description')]: '', [key('data')]: encoded(data, j) });
      const label = `seed ${SEED} case ${c}: ${frame}`;
      const event = eventFromFrame(frame);
      const read = event.data as Msg;
      assert.equal(read.id, id, label);
      assert.equal(read.title, title, label);
      const raised = firmwareErrorFromFrame(event);
      assert.ok(raised.kind === 'raised' && raised.error.id === id && raised.error.title === title, label);
    }
  });

  it('text that is no JSON, numbers in text, and objects in text read as before', function () {
    const event = eventFromFrame(
      JSON.stringify({ code: 'x', description: 'd', data: { a: 'plain', b: '42', c: '{"d":1}', e: '[1,"2"]', f: '"', g: '' } }),
    );
    assert.deepEqual(event.data, { a: 'plain', b: '42', c: { d: 1 }, e: [1, '2'], f: '"', g: '' });
  });

  describe('end to end: lh-events into lh-dialog', function () {
    const sim = useInstrument();

    it('closes a dialog whose frame encodes its view id once more', async function () {
      // opened before anything listens: the simulator's own frame reaches nobody; the instrument's is pushed below
      const box = sim.openMessageBox({ title: 'Door open', text: 'Close the door', buttons: ['Ok'] });
      const server = bServerFlow(sim, { withB: false });
      await loadFlow(
        [
          ...server.nodes,
          { id: 'events', type: 'lh-events', server: 'server', codes: 'messagebox', wires: [['dialog'], []] },
          { id: 'dialog', type: 'lh-dialog', server: 'server', viewResult: 'Ok', wires: [['out']] },
          { id: 'out', type: 'helper' },
        ],
        server.credentials,
      );
      const out: Msg[] = collect(helper.getNode('out'));
      await until(() => sim.eventSocketInfo.counts.events > 0, 'the events socket', 15000);
      const data = { viewId: JSON.stringify(box.viewId), title: JSON.stringify(box.title), buttons: JSON.stringify(['Ok']) };
      sim.publishRawFrame('events', JSON.stringify({ code: 'messagebox', description: box.title, data: JSON.stringify(data) }));
      const closeViews = (): unknown[] => sim.requests.filter((r) => r.path === '/api/v1/maintenance/close-view');
      await until(() => closeViews().length > 0 && sim.requests.at(-1)?.status !== 0, 'the close-view request', 15000);
      await until(() => out.length > 0 || sim.views.closed.length === 0, 'the answer', 15000);
      assert.deepEqual(
        closeViews().map((r) => (r as { body: Msg }).body.viewId),
        [box.viewId],
        'close-view sent the id as the instrument knows it',
      );
      assert.deepEqual(
        sim.views.closed.map((v) => [v.viewId, v.viewResult]),
        [[box.viewId, 'Ok']],
      );
    });
  });
});
