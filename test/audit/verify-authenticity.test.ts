/**
 * What verify may claim about a chain written by someone with write access to it (the file or Redis) but without the
 * checkpoint key: it can recompute every hash, but it cannot sign. fast-check over chain lengths and rewrites.
 */
import assert from 'assert';

import fc from 'fast-check';

import {
  AuditRecord,
  Checkpoint,
  checkpointMac,
  describeReport,
  GENESIS,
  RecordFields,
  seal,
  verifyChain,
  verifyExitCode,
  verifyStreamChain,
} from '../../src/audit';
import { actionFields, INSTRUMENT, KEY } from './chain-support';

/** A chain of `actions` intent/outcome pairs after its opening record, sealed as a writer (or an attacker) would. */
function sealChain(actions: number, from = 0): AuditRecord[] {
  const fields: RecordFields[] = [{ phase: 'file', at: new Date(0).toISOString(), instrument: INSTRUMENT, file: 1 }];
  for (let i = 0; i < actions; i++) fields.push(...actionFields(from + i));
  let prev = GENESIS;
  return fields.map((f, seq) => {
    const r = seal(f, seq, prev);
    prev = r.hash;
    return r;
  });
}

function checkpointOf(last: AuditRecord, key?: Buffer): string {
  const cp: Checkpoint = { seq: last.seq, hash: last.hash, file: 1, at: last.at };
  return JSON.stringify(key ? { ...cp, mac: checkpointMac(key, cp) } : cp);
}

const text = (records: AuditRecord[]): string => records.map((r) => `${JSON.stringify(r)}\n`).join('');

describe('audit verify: authenticity, not only consistency', function () {
  it('a chain rewritten whole with an unsigned checkpoint fails when verify is given the key (no downgrade)', function () {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 1000 }), (actions, from) => {
        // the attacker's own chain: consistent hashes, a checkpoint naming its last record, no signature
        const forged = sealChain(actions, from);
        const checkpoint = checkpointOf(forged[forged.length - 1]);
        const file = verifyChain({ files: [{ name: 'chain.000001.jsonl', text: text(forged) }], checkpoint, key: KEY });
        assert.strictEqual(file.ok, false, 'file chain');
        assert.match(file.firstBad?.reason ?? '', /not signed/);
        const ids = forged.map((_, i) => `1-${i}`);
        const stream = verifyStreamChain('s', { text: text(forged), ids, checkpoint }, KEY);
        assert.strictEqual(stream.ok, false, 'stream chain');
        assert.match(stream.firstBad?.reason ?? '', /not signed/);
      }),
    );
  });

  it('an intact chain whose checkpoint is unsigned, absent or unchecked is never reported OK or verified (exit 3)', function () {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.constantFrom('unsigned', 'absent', 'unchecked'), (actions, kind) => {
        const records = sealChain(actions);
        const last = records[records.length - 1];
        const checkpoint = kind === 'absent' ? undefined : checkpointOf(last, kind === 'unchecked' ? KEY : undefined);
        const report = verifyChain({ files: [{ name: 'f', text: text(records) }], checkpoint });
        assert.strictEqual(report.ok, true);
        assert.strictEqual(report.checkpoint, kind);
        assert.strictEqual(verifyExitCode(report), 3);
        const said = describeReport(report);
        assert.match(said, /^INTACT, NOT AUTHENTICATED: /);
        assert.doesNotMatch(said, /\bOK\b|verified/);
      }),
    );
    const signed = sealChain(3);
    const ok = verifyChain({ files: [{ name: 'f', text: text(signed) }], checkpoint: checkpointOf(signed[6], KEY), key: KEY });
    assert.strictEqual(verifyExitCode(ok), 0);
    assert.match(describeReport(ok), /^OK: 7 records/);
  });

  it('records appended to a Redis stream past its signed checkpoint (sealed without the key) fail, named by entry', function () {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 6 }), (actions, added) => {
        const real = sealChain(actions);
        const checkpoint = checkpointOf(real[real.length - 1], KEY);
        // the attacker seals records of its own on the tail: every hash and link is right, only the key is missing
        const all = [...real];
        for (const f of Array.from({ length: added }, (_, i) => actionFields(5000 + i)[0])) {
          const last = all[all.length - 1];
          all.push(seal(f, last.seq + 1, last.hash));
        }
        const ids = all.map((_, i) => `1-${i}`);
        const report = verifyStreamChain('s', { text: text(all), ids, checkpoint }, KEY);
        assert.strictEqual(report.ok, false);
        assert.strictEqual(report.firstBadEntry, ids[real.length]);
        assert.match(report.firstBad?.reason ?? '', /after the checkpoint/);
        assert.strictEqual(verifyExitCode(report), 1);
      }),
    );
  });

  it('an action appended twice (resealed on the chain) is named as appended twice, with the first record', function () {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.nat(), fc.boolean(), (actions, pick, whole) => {
        const records = sealChain(actions);
        // one action's intent and outcome (or its outcome only) sealed again on the tail, as a lost reply resent would
        const i = pick % actions;
        const again = whole ? actionFields(i) : [actionFields(i)[1]];
        for (const f of again) {
          const last = records[records.length - 1];
          records.push(seal(f, last.seq + 1, last.hash));
        }
        const report = verifyChain({ files: [{ name: 'f', text: text(records) }] });
        assert.strictEqual(report.ok, false);
        const first = 1 + 2 * i;
        assert.match(
          report.firstBad?.reason ?? '',
          whole
            ? new RegExp(`repeats the intent id action-${i} of record #${first} \\(appended twice\\)`)
            : new RegExp(`is a second outcome of the intent #${first} \\(action-${i}\\): appended twice`),
        );
      }),
    );
  });
});
