/**
 * Review (review99's parseNested: a JSON string inside a string is read as its text). Property over drawn values
 * (seeded: LH_SEED replays, LH_CASES draws more): a frame whose values are JSON-encoded again 0 to 10 times, each
 * level on its own or inside an object's JSON text, as instincterrors and instinctevents send them (a dialog's view
 * id too). Within MAX_STRING_LEVELS (8) along a path every value reads as it was meant (an id that is a JSON string
 * of a number stays that text, never a number); beyond, the value stays a string (never thrown, never a wrong
 * value of another type); and unwrapping a frame of 1 MiB made of nested encodings takes a bounded time.
 */
import assert from 'node:assert/strict';

import { eventFromFrame } from '../../src/client/event-frames';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 400;
const MAX_STRING_LEVELS = 8;

function encode(value: unknown, times: number): unknown {
  let out = value;
  for (let i = 0; i < times; i++) out = JSON.stringify(out);
  return out;
}

describe('review: strings encoded again, over drawn levels', function () {
  it(`reads each value as meant within 8 levels, a string beyond (seed ${SEED}, ${CASES} cases)`, function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const leaf = rng.pick<string>([
        '42',
        '3fa85f64-5717-4562-b3fc-2c963f66afa6',
        'Insert plate 7',
        '007',
        '-1.5e3',
        'true',
        'null',
      ]);
      const own = rng.int(0, 10); // the leaf encoded again on its own
      const outer = rng.int(1, 3); // the frame's data as JSON text, this many times
      const data = encode({ viewId: encode(leaf, own), title: 'Door open' }, outer);
      const frame = JSON.stringify({ Code: 'MessageBox', Description: 'dialog', Data: data });
      const label = `seed ${SEED} case ${c}: leaf ${leaf}, own ${own}, outer ${outer}`;
      const event = eventFromFrame(frame);
      assert.equal(event.code, 'messagebox', label);
      const body = event.data as Record<string, unknown>;
      if (outer > MAX_STRING_LEVELS) continue;
      assert.equal(typeof body, 'object', label);
      assert.equal(body.title, 'Door open', label);
      const id = body.viewId;
      assert.equal(typeof id, 'string', `never another type: ${label}`);
      if (outer + own <= MAX_STRING_LEVELS) assert.equal(id, leaf, label);
    }
  });

  it('a 1 MiB frame of nested encodings is unwrapped in bounded time', function () {
    let text = 'x';
    while (text.length < 1024 * 1024) text = JSON.stringify(text);
    const frame = JSON.stringify({ code: 'RuntimeError', description: '', data: text });
    const started = performance.now();
    const event = eventFromFrame(frame);
    const took = performance.now() - started;
    assert.equal(typeof event.data, 'string');
    assert.ok(took < 2000, `${took} ms`);
  });
});
