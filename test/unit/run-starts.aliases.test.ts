/**
 * Issue 17 point 2 (review 2): the one-start-per-instrument claim (and the answer ledger) is keyed by the instrument,
 * not by the text of its URL. Two lh-server nodes for the same instrument written as `http://localhost:8090` and
 * `http://127.0.0.1:8090` (or `[::1]`, an explicit default port, another letter case, a trailing slash) share one
 * book, so two starts arriving together send one create. Property over spellings.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError, type RunStartClaims } from '../../src/client';
import { urlKey } from '../../src/client/answer-ledger';
import { homeKey, homeOf, resetHomes } from '../../src/instrument';

/** The start claims of the instrument whose interface A is at `baseUrl` (its home's, as lh-server hands its client). */
const runStartsFor = (baseUrl: string): RunStartClaims => homeOf(`${baseUrl}|`).runStarts;

describe('the start claim across lh-server nodes of one instrument (review 2)', function () {
  afterEach(() => resetHomes());

  it('a second start through another lh-server node of the same instrument (localhost vs 127.0.0.1) is refused busy', function () {
    const first = runStartsFor('http://127.0.0.1:18090/NimbusLite').claim('protocol 1', 'start-run');
    try {
      assert.throws(
        () => runStartsFor('http://localhost:18090/NimbusLite').claim('protocol 1', 'start-run').release(),
        (err: unknown) => err instanceof LhError && err.kind === 'busy',
      );
    } finally {
      first.release();
    }
  });

  it('property: every spelling of one instrument is one key; another host, port, scheme or path is another', function () {
    const loopback = fc.constantFrom('localhost', 'LocalHost', '127.0.0.1', '[::1]', '[0:0:0:0:0:0:0:1]', '127.1', 'localhost.');
    const spelling = fc.record({
      scheme: fc.constantFrom('http', 'HTTP', 'https', 'Https'),
      host: loopback,
      defaultPort: fc.boolean(),
      path: fc.constantFrom('/NimbusLite', '/nimbuslite', '/NIMBUSLITE'),
      slashes: fc.constantFrom('', '/', '//'),
      blank: fc.constantFrom('', ' '),
    });
    const text = (
      s: { scheme: string; host: string; defaultPort: boolean; path: string; slashes: string; blank: string },
      port?: number,
    ): string => {
      const p = port ?? (s.defaultPort ? (s.scheme.toLowerCase() === 'https' ? 443 : 80) : undefined);
      return `${s.blank}${s.scheme}://${s.host}${p === undefined ? '' : `:${p}`}${s.path}${s.slashes}${s.blank}`;
    };
    fc.assert(
      fc.property(spelling, spelling, fc.constantFrom(8090, 18090), (a, b, port) => {
        const same = a.scheme.toLowerCase() === b.scheme.toLowerCase();
        assert.equal(urlKey(text(a, port)) === urlKey(text(b, port)), same, `${text(a, port)} vs ${text(b, port)}`);
        assert.equal(urlKey(text(a)) === urlKey(text(b)), same, `${text(a)} vs ${text(b)}`);
        assert.notEqual(urlKey(text(a, port)), urlKey(text(a, port + 1)), 'another port is another instrument');
        assert.notEqual(urlKey(text(a, port)), urlKey(text(a, port).replace(/nimbuslite/i, 'Other')), 'another path');
        assert.notEqual(urlKey(text(a, port)), urlKey(text({ ...a, host: '10.0.0.7' }, port)), 'another host');
        // the home (where the start claims and the answer ledgers live) is keyed the same way, with or without B
        assert.equal(homeKey(`${text(a, port)}|`) === homeKey(`${text(b, port)}|https://b.example`), same);
      }),
      { numRuns: 500 },
    );
  });
});
