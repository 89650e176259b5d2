/**
 * Issue 33: the heater-cooler's °C and the deck lights' colour are checked before anything is sent. Every accepted
 * value is exactly what is sent; every refused one names the field and the rule.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import {
  celsius,
  imageType,
  LhError,
  lightColour,
  MAX_CELSIUS,
  MAX_IMAGE_BYTES,
  MIN_CELSIUS,
  readImage,
  traceQuery,
} from '../../src/client';

function refused(fn: () => unknown, field: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof LhError, String(err));
    assert.equal(err.kind, 'validation');
    assert.match(err.field ?? '', field);
    return true;
  });
}

describe('deck inputs: °C and colours checked before sending', function () {
  it('accepts every whole °C in range, as a number or its text, and sends that number', function () {
    fc.assert(
      fc.property(fc.integer({ min: MIN_CELSIUS, max: MAX_CELSIUS }), fc.boolean(), (t, asText) => {
        assert.equal(celsius(asText ? ` ${t} ` : t), t);
      }),
    );
  });

  it('refuses every °C out of range, fractional, non-finite or not a number, naming the field and the range', function () {
    const bad = fc.oneof(
      fc.integer({ max: MIN_CELSIUS - 1 }),
      fc.integer({ min: MAX_CELSIUS + 1 }),
      fc.double({ noNaN: false }).filter((x) => !Number.isInteger(x)),
      fc.constantFrom(null, undefined, true, '', 'hot', '37.5', '1e2', [], {}, Infinity, -Infinity),
    );
    fc.assert(
      fc.property(bad, (t) => {
        refused(() => celsius(t), /^temperature$/);
        try {
          celsius(t);
        } catch (err) {
          assert.match((err as Error).message, new RegExp(`from ${MIN_CELSIUS} to ${MAX_CELSIUS}`));
        }
      }),
    );
  });

  const channel = fc.integer({ min: 0, max: 255 });
  const casing = (name: string): fc.Arbitrary<string> =>
    fc.constantFrom(name, name.toUpperCase(), name[0].toUpperCase() + name.slice(1));

  it('accepts every colour of four channels 0..255, in any key casing or as #rrggbbww, unchanged', function () {
    fc.assert(
      fc.property(channel, channel, channel, channel, casing('red'), casing('white'), (r, g, b, w, rk, wk) => {
        assert.deepEqual(lightColour({ [rk]: r, green: g, Blue: b, [wk]: w }), { red: r, green: g, blue: b, white: w });
        const hex = [r, g, b, w].map((c) => c.toString(16).padStart(2, '0')).join('');
        assert.deepEqual(lightColour(`#${hex}`), { red: r, green: g, blue: b, white: w });
        assert.deepEqual(lightColour(hex.slice(0, 6).toUpperCase()), { red: r, green: g, blue: b, white: 0 });
      }),
    );
  });

  it('refuses any channel outside 0..255 or not whole, naming that channel', function () {
    const badChannel = fc.oneof(
      fc.integer({ max: -1 }),
      fc.integer({ min: 256 }),
      fc.double().filter((x) => !Number.isInteger(x)),
      fc.constantFrom('12', null, true, NaN),
    );
    fc.assert(
      fc.property(fc.constantFrom('red', 'green', 'blue', 'white'), badChannel, (name, value) => {
        const colour: Record<string, unknown> = { red: 1, green: 2, blue: 3, white: 4, [name]: value };
        refused(() => lightColour(colour), new RegExp(`^payload\\.${name}$`));
      }),
    );
  });

  it('a channel set to undefined is left out (as JSON drops it): white 0, a missing red, green or blue named', function () {
    // `{red, green, blue, white: msg.white}` with no msg.white: README "white 0 when left out"
    assert.deepEqual(lightColour({ red: 1, green: 2, blue: 3, white: undefined }), { red: 1, green: 2, blue: 3, white: 0 });
    for (const name of ['red', 'green', 'blue']) {
      const colour: Record<string, unknown> = { red: 1, green: 2, blue: 3, [name]: undefined };
      refused(() => lightColour(colour), new RegExp(`^payload\\.${name}$`));
    }
  });

  it('refuses a missing channel, an unknown key, a key given twice and text that is not a colour', function () {
    refused(() => lightColour({ red: 1, green: 2 }), /^payload\.blue$/);
    refused(() => lightColour({ red: 1, green: 2, blue: 3, amber: 4 }), /^payload\.amber$/);
    refused(() => lightColour({ red: 1, RED: 2, green: 2, blue: 3 }), /^payload\.RED$/);
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/^#?([0-9a-f]{6}|[0-9a-f]{8})$/i.test(s.trim())),
        (text) => refused(() => lightColour(text), /^payload$/),
      ),
    );
    for (const value of [null, undefined, 7, [], true]) refused(() => lightColour(value), /^payload$/);
  });

  it('bounds the traces query: offset >= 0, limit 1..1000, a source name', function () {
    assert.deepEqual(traceQuery({}), { offset: 0, limit: 50 });
    assert.deepEqual(traceQuery({ offset: '5', limit: 10, sources: 'MNE' }), { offset: 5, limit: 10, sources: 'MNE' });
    refused(() => traceQuery({ limit: 0 }), /^limit$/);
    refused(() => traceQuery({ limit: 1001 }), /^limit$/);
    refused(() => traceQuery({ offset: -1 }), /^offset$/);
    refused(() => traceQuery({ sources: 'MNE&x=1' }), /^sources$/);
  });
});

describe('camera images: PNG or JPEG, at most 8 MiB', function () {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
  it('takes PNG and JPEG by their first bytes, whatever the rest', function () {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (rest) => {
        assert.equal(imageType(Buffer.concat([png, rest])), 'image/png');
        assert.equal(imageType(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), rest])), 'image/jpeg');
      }),
    );
  });

  it('refuses anything else as "not an image", and an image over the cap as too large', function () {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const b = Buffer.from(bytes);
        fc.pre(imageType(b) === undefined);
        assert.throws(() => readImage(b, 'snapshot', new Date()), /not an image/);
      }),
    );
    const big = Buffer.alloc(MAX_IMAGE_BYTES + 1);
    png.copy(big);
    assert.throws(() => readImage(big, 'snapshot', new Date()), /over the cap of 8388608/);
    const atCap = Buffer.alloc(MAX_IMAGE_BYTES);
    png.copy(atCap);
    assert.equal(readImage(atCap, 'snapshot', new Date(0)).takenAt, '1970-01-01T00:00:00.000Z');
  });
});
