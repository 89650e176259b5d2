/**
 * Issue 30 point 1: one home per instrument. Every spelling of an instrument's URL finds one home; the lh-server
 * nodes attach and detach in any order, and the home closes exactly when the last one leaves, keeping its memory
 * for the nodes a redeploy starts again; a restart (resetHomes) forgets it all.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { SharedAnswerClaims } from '../../src/client';
import {
  attachHome,
  findHome,
  type HomeAttachment,
  homeKey,
  homeOf,
  InstrumentHome,
  resetHomes,
  slot,
} from '../../src/instrument';

/** A store that counts its closes (as one holding timers or files would close them). */
class Counted {
  closes = 0;
  close(): void {
    this.closes++;
  }
}
const COUNTED = slot('test-counted', () => new Counted());
const LIST = slot('test-list', () => [] as string[]);

const claims = (name: string): SharedAnswerClaims => ({
  claim: () => Promise.resolve({ ok: false, existing: { errorKey: name, response: '', at: 0, outcome: 'answered' } }),
});

describe('instrument home', function () {
  afterEach(() => resetHomes());

  it('is one for every spelling of interface A, with or without interface B', function () {
    const home = homeOf('http://localhost:8090/NimbusLite/|');
    assert.equal(homeOf('HTTP://127.0.0.1:8090/NimbusLite|https://127.0.0.1:8443'), home);
    assert.equal(homeOf('http://[::1]:8090/nimbuslite'), home, 'interface A alone');
    assert.notEqual(homeOf('http://localhost:8091/NimbusLite|'), home, 'another port');
    assert.equal(home.identity, homeKey('http://localhost:8090/NimbusLite'));
    assert.equal(findHome('http://lab-9.example|'), undefined, 'finding does not make one');
  });

  it('holds one store per slot and instrument, made once', function () {
    let made = 0;
    const counting = slot('test-made', () => ({ n: ++made }));
    const a = homeOf('http://a.example|');
    const b = homeOf('http://b.example|');
    assert.equal(a.slot(counting), a.slot(counting));
    assert.notEqual(a.slot(counting), b.slot(counting));
    assert.equal(made, 2);
    assert.equal(a.has(LIST), false);
    a.slot(LIST).push('x');
    assert.equal(a.has(LIST), true);
    assert.deepEqual(b.slot(LIST), []);
  });

  it('shares the answer claims of the newest coordination until it is withdrawn', function () {
    const home = new InstrumentHome('http://a.example');
    assert.equal(home.answerClaims, undefined);
    const first = claims('first');
    const second = claims('second');
    const withdrawFirst = home.useAnswerClaims(first);
    const withdrawSecond = home.useAnswerClaims(second);
    assert.equal(home.answerClaims, second);
    withdrawSecond();
    assert.equal(home.answerClaims, first);
    withdrawSecond(); // twice: harmless
    assert.equal(home.answerClaims, first);
    withdrawFirst();
    assert.equal(home.answerClaims, undefined);
  });

  it('property: the home closes exactly when its last lh-server node detaches; its memory stays for the next', async function () {
    const keys = ['http://localhost:8090|', 'http://127.0.0.1:8090|https://127.0.0.1:8443', 'http://lab-2.example|'];
    const op = fc.oneof(
      fc.record({ kind: fc.constant('attach' as const), key: fc.nat(keys.length - 1) }),
      fc.record({ kind: fc.constant('detach' as const), which: fc.nat(20) }),
      fc.record({ kind: fc.constant('detach-again' as const), which: fc.nat(20) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        resetHomes();
        const held: HomeAttachment[] = [];
        const gone: HomeAttachment[] = [];
        const closes = new Map<InstrumentHome, number>();
        const expectClose = (home: InstrumentHome): void => void closes.set(home, (closes.get(home) ?? 0) + 1);
        for (const o of ops) {
          if (o.kind === 'attach') {
            const attachment = attachHome(keys[o.key]);
            attachment.home.slot(COUNTED); // a store that holds something open
            attachment.home.slot(LIST).push(`attached ${o.key}`);
            held.push(attachment);
          } else if (o.kind === 'detach' && held.length > 0) {
            const [attachment] = held.splice(o.which % held.length, 1);
            gone.push(attachment);
            const last = !held.some((h) => h.home === attachment.home);
            if (last) expectClose(attachment.home);
            await attachment.detach();
          } else if (o.kind === 'detach-again' && gone.length > 0) {
            await gone[o.which % gone.length].detach(); // a second detach of the same node changes nothing
          }
          for (const home of new Set([...held, ...gone].map((h) => h.home))) {
            assert.equal(home.slot(COUNTED).closes, closes.get(home) ?? 0, `closes of ${home.identity}`);
            assert.equal(home.attached, held.filter((h) => h.home === home).length);
          }
        }
        // what was remembered stays in the one home of each instrument, closed or not
        for (const h of [...held, ...gone]) assert.equal(homeOf(h.home.identity), h.home);
        const remembered = [...held, ...gone].reduce((n, h) => n + (h.home.slot(LIST).length > 0 ? 1 : 0), 0);
        assert.equal(remembered, held.length + gone.length);
      }),
      { numRuns: 300 },
    );
  });

  it('is forgotten by a restart: a detach after it closes the old home, and the new one starts empty', async function () {
    const attachment = attachHome('http://a.example|');
    attachment.home.slot(LIST).push('seen');
    resetHomes();
    const again = attachHome('http://a.example|');
    assert.notEqual(again.home, attachment.home);
    assert.deepEqual(again.home.slot(LIST), []);
    attachment.home.slot(COUNTED);
    await attachment.detach();
    assert.equal(attachment.home.slot(COUNTED).closes, 1);
    assert.equal(again.home.has(COUNTED), false);
    assert.equal(again.home.attached, 1);
  });
});
