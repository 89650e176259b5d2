/**
 * Review finding (issue 29, the audit chain after records were lost): after a declared gap `verify` accepts an outcome
 * whose intent is not in the chain (its intent was lost with the gap). It accepted any number of them under one id:
 * the same answer's outcome appended twice after a gap verified, where `verify` otherwise names "a second outcome of
 * the intent ... appended twice". The second outcome of an intent lost in a gap is the same fault. Pure: the chains
 * are sealed here as a writer seals them (a Redis stream after a FLUSHALL, and a file chain after its file was lost).
 */
import assert from 'assert';

import { type AuditRecord, type RecordFields, seal, verifyChain, verifyStreamChain } from '../../src/audit';
import { GENESIS } from '../../src/audit/canonical';
import { actionFields, INSTRUMENT } from '../audit/chain-support';

/** A chain that lost records #0..#1 (an intent among them): a file record declaring them, then `fields`. */
function afterGap(fields: RecordFields[]): AuditRecord[] {
  const gap = { after: null, from: 0, to: 1, reason: 'Redis lost its data' };
  const all: RecordFields[] = [{ phase: 'file', at: new Date(0).toISOString(), instrument: INSTRUMENT, file: 2, gap }, ...fields];
  let prev = GENESIS;
  let seq = 1;
  return all.map((f) => {
    const r = seal(f, ++seq, prev);
    prev = r.hash;
    return r;
  });
}

const text = (records: AuditRecord[]): string => records.map((r) => `${JSON.stringify(r)}\n`).join('');

describe('review: a second outcome of an intent lost in a gap', function () {
  const [, outcome] = actionFields(1);

  it('one outcome after the gap verifies (its intent was lost with it)', function () {
    const report = verifyChain({ files: [{ name: 'chain', text: text(afterGap([outcome])) }] });
    assert.strictEqual(report.firstBad, undefined, report.firstBad?.reason);
    assert.strictEqual(report.gaps.length, 1);
  });

  it('the same outcome twice is tampering, in a file chain and in a stream', function () {
    const records = afterGap([outcome, ...actionFields(2), outcome]);
    const file = verifyChain({ files: [{ name: 'chain', text: text(records) }] });
    assert.match(file.firstBad?.reason ?? 'verified', /second outcome/, 'file chain');
    const last = records[records.length - 1];
    const stream = verifyStreamChain('stream', {
      text: text(records),
      ids: records.map((_, i) => `${i + 1}-0`),
      checkpoint: JSON.stringify({ seq: last.seq, hash: last.hash, file: 2, at: last.at }),
    });
    assert.match(stream.firstBad?.reason ?? 'verified', /second outcome/, 'stream');
  });
});
