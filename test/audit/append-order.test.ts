/**
 * The file chain's append path (issue 22.6, 0.3.3): once the log is open, an append is sealed and, with the writer
 * idle, written and its fdatasync started before append() returns (the request it guards waits one fsync, not a
 * round of queued work first). Appends made while the log is still opening are sealed in the order they were made,
 * and those made after it opened come after them. The canonical JSON that the hashes cover is the same text whatever
 * the key order, and reads back as the value.
 */
import assert from 'assert';
import { createHash } from 'crypto';
import fs from 'fs';

import fc from 'fast-check';

import { AuditLog, AuditRecord } from '../../src/audit';
import { canonicalJson, sha256Hex } from '../../src/audit/canonical';
import { actionFields, countDatasyncs, KEY, readChain, tempDir, verify } from './chain-support';

/** A promise that settles `depth` microtasks from now. */
function afterMicrotasks(depth: number): Promise<void> {
  let p = Promise.resolve();
  for (let k = 0; k < depth; k++) p = p.then(() => undefined);
  return p;
}

/** Appends action i's intent, noting the order the appends were made in. */
function appender(log: AuditLog): { append: (i: number) => void; made: string[]; appends: Promise<AuditRecord>[] } {
  const made: string[] = [];
  const appends: Promise<AuditRecord>[] = [];
  const append = (i: number): void => {
    const [intent] = actionFields(i);
    made.push(`action-${i}`);
    appends.push(log.append(intent));
  };
  return { append, made, appends };
}

/** The appends' records, in chain order, name the actions in the order they were made; the closed chain verifies. */
async function assertSealedInOrder(log: AuditLog, dir: string, appends: Promise<AuditRecord>[], made: string[]): Promise<void> {
  const records = await Promise.all(appends);
  await log.close();
  const bySeq = [...records].sort((a, b) => a.seq - b.seq).map((r) => (r as { id?: string }).id);
  assert.deepEqual(bySeq, made);
  const report = verify(readChain(dir, 'chain'));
  assert.strictEqual(report.ok, true, report.firstBad?.reason);
}

/**
 * Canonical JSON as 0.3.2 spelled it (map, filter, join): the chains already on disk were hashed over this text, so
 * the faster spelling must give the same text for every value, or their hashes would no longer verify.
 */
function canonicalJson032(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson032(item)).join(',')}]`;
  const object = value as Record<string, unknown>;
  const entries = Object.keys(object)
    .sort()
    .filter((key) => object[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson032(object[key])}`);
  return `{${entries.join(',')}}`;
}

describe('audit file chain: the append path', function () {
  it('with the log open and the writer idle, an intent’s fdatasync has started when append() returns', async function () {
    const dir = tempDir();
    const spy = await countDatasyncs(dir);
    try {
      const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY });
      const [first] = actionFields(0);
      await log.append(first);
      for (let i = 1; i <= 5; i++) {
        // the writer idle: the last batch's checkpoint (a tick after its appends resolved) is written
        await new Promise((resolve) => setImmediate(resolve));
        const before = spy.count();
        const [intent] = actionFields(i);
        const durable = log.append(intent);
        assert.equal(spy.count(), before + 1, `append ${i}: its fsync started within the call`);
        const record = await durable;
        assert.equal(record.seq, i + 1, 'the file record is seq 0, the first intent seq 1');
      }
      await log.close();
      const report = verify(readChain(dir, 'chain'));
      assert.strictEqual(report.ok, true, report.firstBad?.reason);
    } finally {
      spy.restore();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('property: appends made while the log opens, in microtasks and after it opened are sealed in the order they were made', async function () {
    await fc.assert(
      fc.asyncProperty(
        // each append: made at once (0), after n microtasks (1..3), or after the log opened (4)
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 12 }),
        async (when) => {
          const dir = tempDir();
          try {
            const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY });
            const { append, made, appends } = appender(log);
            const later: Promise<void>[] = [];
            const opened = log.flush();
            when.forEach((w, i) => {
              if (w === 0) append(i);
              else if (w === 4) later.push(opened.then(() => append(i)));
              else later.push(afterMicrotasks(w).then(() => append(i)));
            });
            await Promise.all(later);
            await assertSealedInOrder(log, dir, appends, made);
          } finally {
            fs.rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('appends made in the microtasks around the moment the log opens are sealed in the order they were made', async function () {
    const dir = tempDir();
    // the log's last step of opening (the checkpoint file's r+ open) is held, so that the test resumes it and makes
    // appends in every microtask just after: some before the log counts as open, some after
    const original = fs.promises.open;
    let reached!: () => void;
    const atLastStep = new Promise<void>((resolve) => (reached = resolve));
    let resume!: () => void;
    const held = new Promise<void>((resolve) => (resume = resolve));
    (fs.promises as { open: unknown }).open = async (...args: Parameters<typeof original>) => {
      const fh = await original(...args);
      if (args[1] === 'r+') {
        reached();
        await held;
      }
      return fh;
    };
    try {
      const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY });
      await atLastStep;
      const { append, made, appends } = appender(log);
      resume();
      // at microtask depth d: one append, then another one a microtask later
      for (let depth = 0; depth < 10; depth++) {
        void afterMicrotasks(depth).then(() => {
          queueMicrotask(() => append(100 + depth));
          append(depth);
        });
      }
      await new Promise((resolve) => setImmediate(resolve));
      await assertSealedInOrder(log, dir, appends, made);
    } finally {
      (fs.promises as { open: unknown }).open = original;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('property: canonical JSON is the text 0.3.2 hashed, reads back as the value, whatever order its keys were made in', function () {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        assert.equal(text, canonicalJson032(value));
        assert.deepStrictEqual(JSON.parse(text), JSON.parse(JSON.stringify(value)));
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
          const reversed = Object.fromEntries(Object.entries(value).reverse());
          assert.equal(canonicalJson(reversed), text);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a property whose value is undefined is left out, as JSON.stringify does', function () {
    assert.equal(canonicalJson({ b: 1, a: undefined, c: [undefined, 2] }), '{"b":1,"c":[null,2]}');
  });

  it('property: sha256Hex is SHA-256 in hex, of a text and of its bytes alike', function () {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const expected = createHash('sha256').update(text).digest('hex');
        assert.equal(sha256Hex(text), expected);
        assert.equal(sha256Hex(Buffer.from(text, 'utf8')), expected);
      }),
      { numRuns: 300 },
    );
  });
});
