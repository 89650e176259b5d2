/**
 * Review finding (review46, lh-events and the frames every node reads): the instrument's frames are JSON inside JSON
 * strings, "several levels deep: unwrap recursively" (README "Live events and dialogs"). The unwrapping counted the
 * levels of objects and of strings together and stopped at 8: a message box whose data sat five JSON texts deep (an
 * object in each) reached lh-events with its fifth level still a string, so lh-dialog found no view id. The same
 * walk gave up at that depth by passing the rest on as parsed, so a frame of nested arrays (1 MiB holds 500,000
 * levels) reached Node-RED whole: its copy for a second wire overflowed the stack and that wire got nothing, said
 * nowhere. And a key `__proto__` in a frame was assigned, not defined: it replaced the object's prototype, so
 * `msg.payload.data.viewId` read a value the frame never gave the data. Now JSON texts are unwrapped up to 8 along a
 * path whatever the objects between them, values deeper than 128 levels are left out (said in their place), and
 * keys are defined as JSON.parse defines them. Seeded: frames of random shape, wrapped at random places.
 */
import assert from 'node:assert/strict';

import { eventFromFrame, MAX_FRAME_DEPTH, TOO_DEEP } from '../../src/client/event-frames';
import { builtNode, useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

/** A random plain value (camelCase keys), `levels` deep at most. */
function plain(rng: Rng, levels: number): unknown {
  if (levels === 0 || rng.chance(0.2)) return rng.pick(['Ok', 42, true, null, 'a text', '']);
  if (rng.chance(0.3)) return Array.from({ length: rng.int(1, 3) }, () => plain(rng, levels - 1));
  const out: Record<string, unknown> = {};
  for (let i = rng.int(1, 3); i > 0; i--)
    out[rng.pick(['viewId', 'title', 'buttons', 'inner', 'step', 'x'])] = plain(rng, levels - 1);
  return out;
}

/** `value` as the instrument may send it: objects and arrays wrapped in JSON text at random, at most `budget` per path. */
function wrapped(rng: Rng, value: unknown, budget: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const wrapHere = budget > 0 && rng.chance(0.5);
  const left = wrapHere ? budget - 1 : budget;
  const inner = Array.isArray(value)
    ? value.map((v: unknown) => wrapped(rng, v, left))
    : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wrapped(rng, v, left)]));
  return wrapHere ? JSON.stringify(inner) : inner;
}

function chain(levels: number): unknown {
  let d: unknown = { viewId: 'deepest' };
  for (let i = 0; i < levels; i++) d = { inner: JSON.stringify(d) };
  return d;
}

describe('review: frames nested in JSON texts are unwrapped along every path, bounded in depth, keys defined', function () {
  it('a message box five JSON texts deep, an object in each, arrives with its view id (seeded: random shapes)', function () {
    const event = eventFromFrame(JSON.stringify({ code: 'MessageBox', description: 'Door', data: JSON.stringify(chain(5)) }));
    let data = event.data as Msg;
    for (let i = 0; i < 5; i++) data = data.inner as Msg;
    assert.equal(data.viewId, 'deepest');
    for (let seed = 1; seed <= 300; seed++) {
      const rng = new Rng(seed);
      const value = { box: plain(rng, 7) };
      const frame = JSON.stringify({ code: 'messagebox', description: 'd', data: wrapped(rng, value, 8) });
      assert.deepEqual(eventFromFrame(frame).data, value, `seed ${seed}: ${frame}`);
    }
  });

  it('values deeper than the bound are left out, said in their place; the rest of the frame is kept', function () {
    const deep = '['.repeat(400_000) + ']'.repeat(400_000);
    const event = eventFromFrame(
      `{"code":"messagebox","data":{"viewId":"v1","extra":${deep},"text":"${'['.repeat(300)}${']'.repeat(300)}"}}`,
    );
    const data = event.data as Msg;
    assert.equal(data.viewId, 'v1');
    let at: unknown = data.extra;
    let levels = 2; // the frame is level 0, its data level 1, data.extra level 2
    while (Array.isArray(at)) {
      at = at[0];
      levels++;
    }
    assert.equal(at, TOO_DEEP);
    assert.equal(levels, MAX_FRAME_DEPTH);
    assert.doesNotThrow(() => JSON.stringify(event));
  });

  it('a key "__proto__" is the frame\'s own property, never the prototype of what the flow reads', function () {
    const event = eventFromFrame(
      '{"code":"messagebox","data":"{\\"__proto__\\":{\\"viewId\\":\\"not-this\\"},\\"id\\":\\"v7\\"}"}',
    );
    const data = event.data as Msg;
    assert.equal(Object.getPrototypeOf(data), Object.prototype);
    assert.equal(data.viewId, undefined);
    assert.deepEqual(Object.getOwnPropertyDescriptor(data, '__proto__')?.value, { viewId: 'not-this' });
  });

  describe('with lh-events in a real Node-RED', function () {
    const sim = useInstrument();

    it('a frame nested 400,000 deep reaches both wires of lh-events, and so does the next frame', async function () {
      this.timeout(30000);
      const server = serverFlow(sim, { withB: false });
      await helper.load(
        [tlsConfigNode, builtNode('lh-server'), builtNode('lh-events')],
        [
          ...server.nodes,
          { id: 'ev', type: 'lh-events', server: 'server', codes: '', wires: [['one', 'two'], ['conn']] },
          { id: 'one', type: 'helper' },
          { id: 'two', type: 'helper' },
          { id: 'conn', type: 'helper' },
        ],
        server.credentials,
      );
      const one = collect(helper.getNode('one'));
      const two = collect(helper.getNode('two'));
      const conn = collect(helper.getNode('conn'));
      await until(() => conn.some((m) => (m.payload as Msg).state === 'connected'), 'the events socket', 10000);
      const deep = '['.repeat(400_000) + ']'.repeat(400_000);
      sim.publishRawFrame('events', `{"code":"messagebox","data":{"viewId":"v1","extra":${deep}}}`);
      sim.publishEvent('finished', 'Run finished', { runId: 'r1' });
      await until(() => one.length === 2 && two.length === 2, 'both frames on both wires', 10000);
      assert.deepEqual(
        two.map((m) => [m.topic, ((m.payload as Msg).data as Msg).viewId ?? ((m.payload as Msg).data as Msg).runId]),
        [
          ['messagebox', 'v1'],
          ['finished', 'r1'],
        ],
      );
    });
  });
});
