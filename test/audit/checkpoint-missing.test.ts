/**
 * A chain file's checkpoint deleted (or emptied, or overwritten) while no writer runs: the next writer cannot know
 * what the old one named, writes a new one and goes on, and from then on `verify` says OK, records cut from the end
 * meanwhile included. That loss of evidence is said once, when the chain is opened ('checkpoint-missing': the
 * lh-server node logs it, lh-audit shows it); never for a new chain, nor for a chain whose checkpoint is there.
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import { AuditLog, AuditRecord, chainFile, chainIndexes, checkpointFile, checkpointMac } from '../../src/audit';
import { Rng } from '../support/prng';
import { actionFields, KEY, readChain, tempDir, verify } from './chain-support';

const NAME = 'chain';
const FATES = ['kept', 'deleted', 'emptied', 'altered', 'unsigned', 'other-key'] as const;

async function session(
  dir: string,
  actions: number,
  from: number,
  maxFileBytes: number,
): Promise<{ missing: string[]; gaps: number }> {
  const log = new AuditLog({ dir, name: NAME, instrument: 'https://lh.example|', key: KEY, maxFileBytes, fsync: false });
  const missing: string[] = [];
  let gaps = 0;
  log.on('checkpoint-missing', (text: string) => missing.push(text));
  log.on('gap', () => gaps++);
  const writes: Promise<AuditRecord>[] = [];
  for (let i = from; i < from + actions; i++) for (const f of actionFields(i)) writes.push(log.append(f));
  await Promise.all(writes);
  await log.close();
  return { missing, gaps };
}

/** The complete records on disk. */
function lines(dir: string): number {
  return readChain(dir, NAME).files.reduce((n, f) => n + f.text.split('\n').length - 1, 0);
}

describe('audit chain file: its checkpoint gone while no writer ran', function () {
  it('seeded: said once at the next start, naming the last record, exactly when a chain with records has none', async function () {
    this.timeout(60_000);
    const seen = new Set<string>();
    for (let seed = 1; seed <= 90; seed++) {
      const rng = new Rng(seed);
      const dir = tempDir();
      try {
        const maxFileBytes = rng.pick([700, 64 * 1024]);
        const actions = rng.int(0, 5);
        const fate = rng.pick(FATES);
        const cut = rng.chance(0.4);
        await session(dir, actions, 0, maxFileBytes);
        // the end of the chain cut by someone (a line at most, never a file's file record)
        const indexes = chainIndexes(dir, NAME);
        const last = indexes.length > 0 ? chainFile(dir, NAME, indexes[indexes.length - 1]) : undefined;
        if (cut && last) {
          const text = fs.readFileSync(last, 'utf8').split('\n');
          if (text.length > 2) fs.writeFileSync(last, `${text.slice(0, -2).join('\n')}\n`);
        }
        // or every file of it gone: a new chain when the checkpoint went too (a gap declared when it is there)
        if (rng.chance(0.2)) for (const i of chainIndexes(dir, NAME)) fs.rmSync(chainFile(dir, NAME, i));
        const records = lines(dir);
        const cp = checkpointFile(dir, NAME);
        if (fate === 'deleted') fs.rmSync(cp, { force: true });
        else if (fate === 'emptied' && fs.existsSync(cp)) fs.writeFileSync(cp, '');
        else if (fate === 'altered') fs.writeFileSync(cp, 'not a checkpoint');
        else if ((fate === 'unsigned' || fate === 'other-key') && records > 0) {
          // a checkpoint naming the chain's last record, as someone without the key can write one over a cut end
          const left = chainIndexes(dir, NAME);
          const file = left[left.length - 1];
          const last = JSON.parse(
            fs
              .readFileSync(chainFile(dir, NAME, file), 'utf8')
              .trim()
              .split('\n')
              .pop() ?? '',
          ) as AuditRecord;
          const head = { seq: last.seq, hash: last.hash, file };
          const mac = fate === 'other-key' ? { mac: checkpointMac(Buffer.from('another key'), head) } : {};
          fs.writeFileSync(cp, JSON.stringify({ ...head, at: new Date().toISOString(), ...mac }));
        }
        const checkpointGone = fate !== 'kept' || !fs.existsSync(cp) || fs.readFileSync(cp, 'utf8').trim() === '';
        // (every file gone and the checkpoint kept: a gap is declared instead)
        const expected = records > 0 && checkpointGone;
        seen.add(`${String(expected)}:${fate}`);
        // a start that records nothing (a restart over a quiet weekend) counts too: said once all the same
        const second = await session(dir, rng.int(0, 1), 100, maxFileBytes);
        if (records === 0 && fate === 'kept') assert.equal(second.gaps, 1, 'every file gone, the checkpoint there: a gap');
        const what = `seed ${seed}: ${actions} actions, ${records} records, checkpoint ${fate}, cut ${String(cut)}`;
        assert.equal(second.missing.length, expected ? 1 : 0, `${what}: ${JSON.stringify(second.missing)}`);
        if (expected) {
          const text = second.missing[0];
          assert.ok(text.includes(cp), text);
          assert.match(text, new RegExp(`last record #${records - 1}\\)`), text);
          const how = {
            deleted: /missing \(deleted/,
            emptied: /was empty/,
            altered: /not a checkpoint/,
            unsigned: /not signed with this Node-RED's key/,
            'other-key': /not signed with this Node-RED's key/,
            kept: /missing|empty/,
          };
          assert.match(text, how[fate], text);
          // what the warning stands for: the chain verifies now, a cut end included
          const report = verify(readChain(dir, NAME));
          assert.equal(report.ok && report.checkpoint === 'verified', true, `${what}: ${report.firstBad?.reason ?? ''}`);
        }
        // once: the checkpoint written since is found at the next start
        const third = await session(dir, rng.int(0, 1), 200, maxFileBytes);
        assert.equal(third.missing.length, 0, `${what}, third start: ${JSON.stringify(third.missing)}`);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    for (const k of [
      'true:deleted',
      'true:emptied',
      'true:altered',
      'true:unsigned',
      'true:other-key',
      'false:kept',
      'false:deleted',
    ])
      assert.ok(seen.has(k), `case ${k} drawn: ${[...seen].join(', ')}`);
  });
});
