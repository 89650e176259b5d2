/**
 * review99's left item: an instrument date without a zone is the instrument's UTC everywhere in the package, but the
 * answer page's time and the notification's `{{time}}` read it as the Node-RED host's local time (a lab at UTC-5 saw a
 * 12:00 UTC error shown as 12:00 local, 5 hours off), and a date written with a space before its time was UTC in the
 * lab's state document but local time in run and policy decisions. One reading now: utcUnlessZoned.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { instrumentDate, utcUnlessZoned } from '../../src/client';
import { formatTime } from '../../src/nodes/shared/error-messages';
import { stampOf } from '../../src/nodes/shared/lab-publish';
import { zonedTime } from '../../src/nodes/shared/zoned-time';

describe("instrument dates: one reading, zone-less is the instrument's UTC", function () {
  const savedTz = process.env.TZ;
  before(() => {
    process.env.TZ = 'America/New_York';
  });
  after(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  it('shows a zone-less time stamp in the host zone, from UTC, in the page and the notification', function () {
    // 2026-01-31 12:00 UTC is 07:00 in New York (EST, UTC-5)
    assert.match(zonedTime('2026-01-31T12:00:00'), /^2026-01-31 07:00:00 UTC-05:00/);
    assert.match(zonedTime('2026-01-31 12:00:00'), /^2026-01-31 07:00:00 UTC-05:00/);
    assert.equal(formatTime('2026-01-31T12:00:00.123'), '2026-01-31 07:00:00');
    assert.equal(formatTime('2026-01-31T12:00:00+01:00'), '2026-01-31 06:00:00', 'a zone given is kept');
    assert.equal(formatTime('not a date'), 'not a date');
    assert.equal(instrumentDate('2026-01-31 12:00:00'), '2026-01-31T12:00:00.000Z');
  });

  it('property: every reader gives one instant for a date written with T or a space, zoned or not', function () {
    const instant = fc
      .integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 0, 1) })
      .map((ms) => Math.floor(ms / 1000) * 1000);
    fc.assert(
      fc.property(instant, fc.constantFrom('T', ' '), fc.constantFrom('', 'Z', '+00:00', '.000'), (ms, sep, tail) => {
        const text = new Date(ms).toISOString().slice(0, 19).replace('T', sep) + tail;
        assert.equal(Date.parse(utcUnlessZoned(text)), ms, text);
        assert.equal(instrumentDate(text), new Date(ms).toISOString(), text);
        assert.equal(stampOf('A', { id: '1', timeStamp: text } as never), ms, text);
        const local = new Date(ms);
        const pad = (n: number): string => String(n).padStart(2, '0');
        assert.equal(
          formatTime(text).slice(11),
          `${pad(local.getHours())}:${pad(local.getMinutes())}:${pad(local.getSeconds())}`,
          text,
        );
      }),
      { numRuns: 300 },
    );
  });
});
