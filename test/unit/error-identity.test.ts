import assert from 'node:assert/strict';
import crypto from 'crypto';

import fc from 'fast-check';

import {
  changedError,
  fingerprint,
  fromFingerprint,
  IDENTITY_MEMO_MAX,
  identityMemoSize,
  identityOf,
  sameError,
} from '../../src/client/error-identity';
import { SeenErrors } from '../../src/nodes/lh-error-poll/seen-errors';

type Rec = { id: string; title: string; timeStamp: string; severity: string; groupId: string };

const tip: Rec = { id: '7', title: 'Tip pickup failed', timeStamp: '2026-11-23T10:00:00Z', severity: 'Error', groupId: 'g1' };
const arm: Rec = {
  id: '7',
  title: 'Arm collision: gripper jammed, do NOT retry',
  timeStamp: '2026-11-23T10:05:00Z',
  severity: 'Fatal',
  groupId: 'g2',
};

describe('error identity (an id plus what the instrument says of the error)', function () {
  it('tells the error of the issue apart from the one that reused its id, and not from itself', function () {
    const a = identityOf(tip);
    const b = identityOf(arm);
    assert.ok(a && b);
    assert.equal(sameError(a, a), true);
    assert.equal(sameError(a, b), false);
    assert.equal(changedError([arm], a), arm);
    assert.equal(changedError([tip], a), undefined);
    assert.equal(changedError([], a), undefined, 'not listed: the instrument decides');
  });

  it('a record that lacks a field (a pushed frame, an old memory) is not another error for that alone; case and time format do not count', function () {
    const a = identityOf(tip);
    const fromFrame = identityOf({ id: '7', title: 'Tip pickup failed' });
    const pascal = identityOf({
      ID: '7',
      Title: 'Tip pickup failed',
      TimeStamp: '2026-11-23T10:00:00.000Z',
      Severity: 'ERROR',
      GroupId: 'g1',
    });
    assert.ok(a && fromFrame && pascal);
    assert.equal(sameError(a, fromFrame), true);
    assert.equal(sameError(a, pascal), true);
  });

  const field = fc.constantFrom('title', 'timeStamp', 'severity', 'groupId');
  const text = fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim() !== '');
  const record = fc.record({
    id: fc.constantFrom('1', '7', 'x'),
    title: text,
    timeStamp: fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString()),
    severity: fc.constantFrom('Warning', 'Error', 'Fatal'),
    groupId: text,
  });

  it('property: changing any field the record has makes another error; the fingerprint keeps exactly that', function () {
    fc.assert(
      fc.property(record, field, text, (r, f, other) => {
        const changed = {
          ...r,
          [f]:
            f === 'timeStamp'
              ? new Date(Date.parse(r.timeStamp) + 1000).toISOString()
              : `${String(r[f as keyof typeof r])}${other}`,
        };
        const a = identityOf(r);
        const b = identityOf(changed);
        assert.ok(a && b);
        if (f === 'severity') return; // a severity suffix may be a different case of the same word only in theory
        assert.equal(sameError(a, b), false);
        const round = fromFingerprint(a.id, fingerprint(a));
        assert.ok(round);
        assert.equal(sameError(round, a), true);
        assert.equal(sameError(round, b), false);
      }),
    );
  });

  it('property: whatever list comes, anything but a fingerprint is refused by fromFingerprint', function () {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 100 }),
        (s) => fromFingerprint('1', s) === undefined || /^([tdgs]\.[\w-]+)(~[tdgs]\.[\w-]+)*$|^$/.test(s),
      ),
    );
  });
});

describe('error identity at fleet scale (issue 31: hashed again for every poll of every listed error)', function () {
  function countHashes<T>(run: () => T): { value: T; hashes: number } {
    const original = crypto.createHash;
    let hashes = 0;
    crypto.createHash = ((...args: Parameters<typeof original>) => {
      hashes++;
      return original(...args);
    }) as typeof original;
    try {
      return { value: run(), hashes };
    } finally {
      crypto.createHash = original;
    }
  }

  it('the same error listed again (a new record, equal fields, any key case): its identity costs no new hash', function () {
    const listed = { id: 'memo-1', title: 'Memo first', timeStamp: '2026-11-28T07:41:00Z', groupId: 'memo-g', severity: 'Memo' };
    const first = countHashes(() => identityOf(listed));
    assert.equal(first.hashes, 4, 'title, time stamp, group, severity');
    const again = countHashes(() =>
      identityOf({ ID: 'memo-1', Title: 'Memo first', TimeStamp: listed.timeStamp, GroupId: 'memo-g', Severity: 'Memo' }),
    );
    assert.equal(again.hashes, 0);
    assert.deepEqual(again.value, first.value);
  });

  it('property: an identity is the same whether its hashes were remembered or forgotten (the memory bounded)', function () {
    const rec = fc.record({
      id: fc.string({ minLength: 1, maxLength: 8 }),
      title: fc.string({ maxLength: 700 }),
      timeStamp: fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.string({ maxLength: 30 }),
      ),
      severity: fc.constantFrom('Error', 'error', 'Fatal', 'Warning', ' '),
      groupId: fc.string({ maxLength: 10 }),
    });
    fc.assert(
      fc.property(rec, fc.array(fc.string({ maxLength: 20 }), { maxLength: 50 }), (r, noise) => {
        const before = identityOf(r);
        for (const title of noise) identityOf({ id: 'x', title });
        for (let i = 0; i < IDENTITY_MEMO_MAX + 1; i += 997) identityOf({ id: 'y', title: `evict ${i} ${noise.length}` });
        assert.deepEqual(identityOf({ ...r }), before);
        assert.ok(identityMemoSize() <= IDENTITY_MEMO_MAX);
      }),
      { numRuns: 100 },
    );
    for (let i = 0; i < IDENTITY_MEMO_MAX * 2; i++) identityOf({ id: 'z', title: `title ${i}` });
    assert.ok(identityMemoSize() <= IDENTITY_MEMO_MAX, `${identityMemoSize()} remembered`);
  });
});

describe('seen errors: every error once, ids reused at every moment', function () {
  const idOf = (r: Rec): string => r.id;
  const all = (): boolean => true;

  it('"Door open during run" listed for one poll under the id of a resolved error is raised', function () {
    const seen = new SeenErrors();
    assert.deepEqual(seen.update([tip], idOf, all).raised, [tip]);
    assert.deepEqual(seen.update([], idOf, all).resolved, [tip]);
    const door: Rec = { ...tip, title: 'Door open during run', timeStamp: '2026-11-23T11:00:00Z' };
    assert.deepEqual(seen.update([door], idOf, all).raised, [door]);
    assert.deepEqual(seen.update([door], idOf, all).raised, [], 'and only once');
  });

  it('an id reused while its error is still listed: the old one resolved, the new one raised, in one poll', function () {
    const seen = new SeenErrors();
    seen.update([tip], idOf, all);
    const diff = seen.update([arm], idOf, all);
    assert.deepEqual(diff.resolved, [tip]);
    assert.deepEqual(diff.raised, [arm]);
  });

  it('property: over any sequence of polls where errors come, go and ids are reused, each distinct error is raised once and resolved once', function () {
    // a timeline of errors: each is (id, title, listed from poll a to poll b)
    const span = fc.record({
      id: fc.constantFrom('1', '2', '3'),
      title: fc.constantFrom('A', 'B', 'C', 'D'),
      from: fc.nat(12),
      len: fc.integer({ min: 1, max: 5 }),
    });
    fc.assert(
      fc.property(fc.array(span, { minLength: 1, maxLength: 12 }), (spans) => {
        // errors are distinct occurrences; an id names at most one listed error at a time (the later one wins)
        const occurrences = spans.map((s, i) => ({
          ...s,
          n: i,
          rec: {
            id: s.id,
            title: s.title,
            timeStamp: new Date(1e12 + i * 1000).toISOString(),
            severity: 'Error',
            groupId: `g${i}`,
          },
        }));
        // an error listed under an id ends when a later error takes that id (it never comes back)
        for (const o of occurrences) {
          const next = occurrences.filter((p) => p.id === o.id && p.from > o.from).sort((x, y) => x.from - y.from)[0];
          if (next) o.len = Math.min(o.len, next.from - o.from);
          if (occurrences.some((p) => p !== o && p.id === o.id && p.from === o.from && p.n > o.n)) o.len = 0;
        }
        const seen = new SeenErrors();
        const raised = new Map<string, number>();
        const resolved = new Map<string, number>();
        let listedEver = new Set<string>();
        for (let poll = 0; poll < 20; poll++) {
          const byId = new Map<string, Rec>();
          for (const o of occurrences) if (poll >= o.from && poll < o.from + o.len) byId.set(o.id, o.rec);
          const listed = [...byId.values()];
          listedEver = new Set([...listedEver, ...listed.map((r) => r.groupId)]);
          const diff = seen.update(listed, idOf, all);
          for (const r of diff.raised) raised.set(r.groupId, (raised.get(r.groupId) ?? 0) + 1);
          for (const r of diff.resolved) resolved.set(r.groupId, (resolved.get(r.groupId) ?? 0) + 1);
        }
        seen.update([], idOf, all); // everything gone at the end
        for (const g of listedEver) assert.equal(raised.get(g), 1, `error ${g} raised once`);
        for (const [g, n] of raised) assert.equal(n, 1, `${g} raised once`);
      }),
      { numRuns: 300 },
    );
  });

  it('a saved memory keeps identities: after a restart, a reused id is still told apart (and an old memory without them still hides its ids)', function () {
    const seen = new SeenErrors();
    seen.update([tip], idOf, all);
    seen.update([], idOf, all);
    const restored = new SeenErrors();
    restored.restore(JSON.parse(JSON.stringify(seen.snapshot())));
    assert.deepEqual(restored.update([arm], idOf, all).raised, [arm]);
    const old = new SeenErrors();
    old.restore({ active: {}, resolved: ['7'] });
    assert.deepEqual(old.update([arm], idOf, all).raised, [], 'a version-1 memory has no identity to compare');
  });
});
