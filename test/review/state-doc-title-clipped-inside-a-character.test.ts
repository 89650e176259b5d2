/**
 * Review finding (the state stream): a title over 200 characters is clipped in the state document and the event msgs.
 * The clip cut at the 199th UTF-16 unit, so a character outside the BMP (an emoji, a CJK extension ideograph) that
 * straddled it was cut in two: the document carried a lone surrogate, which JSON.stringify writes as `\ud83e`. A
 * subscriber whose JSON reader refuses unpaired surrogates (Rust's serde_json: "lone leading surrogate in hex
 * escape") could not read the retained document at all, and others showed U+FFFD. Texts are now clipped at a
 * character's edge, as topic levels and metrics labels are.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { fold, newMemory, shownError } from '../../src/observe/state-document';

const loneSurrogate = /\p{Cs}/u;

describe('review: a title clipped inside a character', function () {
  it('property: a shown title, id, reason, protocol or step holds whole characters only, at most 200 units', function () {
    const astral = fc.constantFrom('\u{1f9ea}', '\u{20000}', '\u{1d11e}');
    fc.assert(
      fc.property(
        fc.integer({ min: 190, max: 210 }),
        fc.array(fc.oneof(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 3 }), astral), {
          minLength: 1,
          maxLength: 12,
        }),
        (lead, parts) => {
          const text = 'x'.repeat(lead) + parts.join('');
          const e = shownError({ source: 'A', id: text, title: text, severity: 'Error' });
          let m = newMemory('X', 0);
          m = fold(m, { instrumentKey: 'k', instrument: 'X', kind: 'connection', state: 'offline', reason: text }, 1);
          m = fold(m, { instrumentKey: 'k', instrument: 'X', kind: 'run', state: 'Running', protocol: text, step: text }, 2);
          for (const shown of [e.title, e.id, m.doc.connection.reason ?? '', m.doc.run.protocol ?? '', m.doc.run.step ?? '']) {
            assert.ok(!loneSurrogate.test(shown), `${JSON.stringify(shown.slice(-4))} holds half a character`);
            assert.ok(shown.length <= 200);
            if (shown !== text) assert.ok(shown.endsWith('…') && text.startsWith(shown.slice(0, -1)));
          }
          assert.doesNotMatch(JSON.stringify(m.doc), /\\ud[89ab]/i);
        },
      ),
      { numRuns: 300 },
    );
  });
});
