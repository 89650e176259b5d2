/**
 * Review finding (metrics): the instrument label is the lh-server's name, clipped to 64 UTF-16 units. The clip cut a
 * character outside the Basic Multilingual Plane (an emoji, a CJK extension ideograph) in two when it straddled the
 * 64th unit: the lone high surrogate left went out on the page as U+FFFD, so `lh_instrument_up{instrument="…�"}` named
 * no instrument of the lab (a Grafana variable or an alert rule matching the name never matched). The state topic's
 * level (topicLevel) never cuts a character; the label now clips the same way, leaving the straddling character out
 * whole.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LabMetrics } from '../../src/observe/metrics';

const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => {
  name: string;
  metrics: { labels?: Record<string, string> }[];
}[];

describe('review: an instrument label clipped inside a character', function () {
  it('property: the label is the longest prefix of the name of at most 64 units made of whole characters', async function () {
    const astral = fc.constantFrom('\u{1f9ea}', '\u{20000}', '\u{1d11e}');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 50, max: 70 }),
        fc.array(fc.oneof(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 3 }), astral), {
          minLength: 1,
          maxLength: 12,
        }),
        async (lead, parts) => {
          const name = 'x'.repeat(lead) + parts.join('');
          fc.pre(!name.includes('://') && name.trim() !== '');
          const metrics = new LabMetrics(() => 0);
          try {
            metrics.observe({ instrumentKey: 'k', instrument: name, kind: 'connection', state: 'online' });
            const page = (await metrics.render()).body;
            const label = parsePrometheus(page).find((f) => f.name === 'lh_instrument_up')?.metrics[0]?.labels?.instrument;
            assert.ok(label !== undefined, page);
            // written as UTF-8 on the page, a lone surrogate becomes U+FFFD: a name no instrument has
            assert.ok(
              !/\p{Cs}/u.test(label) && !label.includes('\ufffd'),
              `${JSON.stringify(name)} labelled ${JSON.stringify(label)}`,
            );
            assert.ok(name.startsWith(label) && label.length <= 64, JSON.stringify(label));
            const next = [...name.slice(label.length)][0];
            if (next !== undefined) assert.ok(label.length + next.length > 64, `${JSON.stringify(label)} left out more`);
          } finally {
            metrics.close();
          }
        },
      ),
      { numRuns: 300 },
    );
    // the case as found: 63 units and an emoji
    const metrics = new LabMetrics(() => 0);
    metrics.observe({ instrumentKey: 'k', instrument: `${'x'.repeat(63)}\u{1f9ea} bay 2`, kind: 'connection', state: 'online' });
    assert.match((await metrics.render()).body, new RegExp(`lh_instrument_up\\{instrument="${'x'.repeat(63)}"\\} 1`));
    metrics.close();
  });
});
