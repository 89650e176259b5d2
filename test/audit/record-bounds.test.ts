/**
 * A record's size is bounded whatever a flow or the instrument hands it: the body, the old value (routine update,
 * settings merge) and the why (the error answered) above MAX_RECORDED_BODY_BYTES are left out, their SHA-256 kept.
 */
import assert from 'assert';

import fc from 'fast-check';

import {
  AuditRecord,
  AuditTrail,
  canonicalJson,
  MAX_RECORDED_BODY_BYTES,
  MAX_WHO_CHARS,
  RecordFields,
  sha256Hex,
  withActor,
} from '../../src/audit';

function recorder(): { trail: AuditTrail; records: RecordFields[] } {
  const records: RecordFields[] = [];
  const log = {
    append: async (f: RecordFields) => {
      records.push(f);
      return f as AuditRecord;
    },
    close: async () => undefined,
    on: () => undefined,
  };
  return { trail: new AuditTrail(log, { instrument: 'https://lh.example|' }), records };
}

describe('audit record bounds', function () {
  it('old and why larger than the limit are left out with their SHA-256; smaller ones are kept whole', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 * MAX_RECORDED_BODY_BYTES }),
        fc.integer({ min: 1, max: 4 * MAX_RECORDED_BODY_BYTES }),
        async (oldBytes, whyBytes) => {
          const old = { script: 'x'.repeat(oldBytes) };
          const why = { title: 'y'.repeat(whyBytes) };
          const { trail, records } = recorder();
          await withActor(
            { old, why },
            () =>
              trail.intent({ api: 'A', method: 'PUT', path: '/r', operation: 'update-service-routine', body: { a: 1 } }).durable,
          );
          const record = records[0] as Extract<RecordFields, { phase: 'intent' }>;
          for (const [name, value, kept] of [
            ['old', old, record.old],
            ['why', why, record.why],
          ] as const) {
            const text = canonicalJson(value);
            if (Buffer.byteLength(text) <= MAX_RECORDED_BODY_BYTES) assert.deepStrictEqual(kept, value, name);
            else assert.deepStrictEqual(kept, { omitted: true, bytes: Buffer.byteLength(text), sha256: sha256Hex(text) }, name);
          }
          assert.ok(Buffer.byteLength(JSON.stringify(record)) < 3 * MAX_RECORDED_BODY_BYTES);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('who texts (a signer, a meaning from a flow) are cut to MAX_WHO_CHARS, saying how long they were', async function () {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 5 * MAX_WHO_CHARS }), async (length) => {
        const signer = 's'.repeat(length);
        const { trail, records } = recorder();
        await withActor(
          { signer, meaning: 'abort', node: 'n1' },
          () => trail.intent({ api: 'A', method: 'PUT', path: '/r', operation: 'answer' }).durable,
        );
        const who = (records[0] as Extract<RecordFields, { phase: 'intent' }>).who;
        assert.strictEqual(
          who.signer,
          length <= MAX_WHO_CHARS ? signer : `${signer.slice(0, MAX_WHO_CHARS)}… (${length} characters)`,
        );
        assert.strictEqual(who.meaning, 'abort');
        assert.strictEqual(who.node, 'n1');
      }),
      { numRuns: 30 },
    );
  });
});
