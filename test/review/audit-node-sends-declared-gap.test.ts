/**
 * Review (review87): the **audit** node (lh-audit) is the lab's copy of the trail ("sends every audit record … to pass
 * on to the lab's database or SIEM"; "only a copy kept elsewhere shows those: compare the last #seq"). A chain that
 * went on after records were lost (its file deleted while Node-RED ran, then reopened) declares the gap in the record
 * that opens its new file: `{phase: "file", gap: {after, from, to, reason}}`. Before the fix lh-audit dropped every
 * file record, that one too: the copy never learnt that records #from to #to are missing (only a status said "audit
 * gap"), and its seqs had holes at every new file that the copy could not tell from lost records.
 *
 * In a real Node-RED against the simulator: lh-audit sends every record of the chain, the file records too (topic
 * `file/opened`, or `file/gap` for one declaring missing records), so the seqs it sends are the chain's, without a hole.
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import { type AuditRecord, FILE_PATTERN } from '../../src/audit';
import { useAuditDir } from '../audit/chain-support';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, nextMessage, runtimeSettings, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('lh-audit sends the record that declares a gap, and every file record', function () {
  this.timeout(30000);
  const sim = useInstrument();
  const audit = useAuditDir(runtimeSettings);

  async function deploy(): Promise<Msg[]> {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
        { id: 'audit', type: 'lh-audit', server: 'server', wires: [['records']] },
        { id: 'records', type: 'helper' },
      ],
      server.credentials,
    );
    return collect(helper.getNode('records'));
  }

  async function clear(): Promise<void> {
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 1 });
    await out;
  }

  const seqs = (msgs: Msg[]): number[] => msgs.map((m) => (m.payload as AuditRecord & { seq: number }).seq);

  it('the chain file deleted while Node-RED runs, reopened: the copy gets the gap declared, and no hole in the seqs', async function () {
    let records = await deploy();
    await clear();
    await until(() => records.length >= 3, 'the file record, the intent and the outcome of the first clear');
    assert.deepEqual(
      records.map((m) => m.topic),
      ['file/opened', 'intent/clear-errors', 'outcome/clear-errors'],
    );
    const first = seqs(records);
    assert.deepEqual(first, [0, 1, 2], 'every record of the chain, in order');

    const file = fs.readdirSync(audit.dir()).find((f) => FILE_PATTERN.test(f));
    assert.ok(file);
    fs.unlinkSync(`${audit.dir()}/${file}`); // records #0 to #2 lost
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('clear').receive({ payload: 2 });
    assert.match(String(((await caught).error as { message: string }).message), /was not sent/);

    await helper.unload(); // a redeploy reopens the chain: it goes on in a new file that declares the gap
    records = await deploy();
    await clear();
    await until(() => records.length >= 3, 'the gap record, the intent and the outcome of the clear after the reopen');
    const gap = records[0];
    assert.equal(gap.topic, 'file/gap');
    const declared = (gap.payload as { phase: string; gap?: { from: number; to: number } }).gap;
    assert.ok(declared, `the gap in the copy: ${JSON.stringify(gap.payload)}`);
    assert.deepEqual([declared.from, declared.to], [0, 2], 'the records lost, as the chain declares them');
    assert.deepEqual(
      records.slice(1).map((m) => m.topic),
      ['intent/clear-errors', 'outcome/clear-errors'],
    );
    const after = seqs(records);
    assert.deepEqual(
      after,
      after.map((_, i) => after[0] + i),
      'the seqs the copy gets after the gap have no hole',
    );
  });

  it('a chain that rotates into new files: the copy gets every record, seqs without a hole, one file/opened per file', async function () {
    runtimeSettings({ lhAudit: { dir: audit.dir(), key: 'node-test-key', maxFileBytes: 1500 } });
    const records = await deploy();
    for (let i = 0; i < 6; i++) await clear();
    await until(() => records.filter((m) => m.topic === 'outcome/clear-errors').length === 6, 'six outcomes');
    const sent = seqs(records);
    assert.deepEqual(
      sent,
      sent.map((_, i) => i),
      'every seq of the chain, in order',
    );
    const files = fs.readdirSync(audit.dir()).filter((f) => FILE_PATTERN.test(f));
    assert.ok(files.length > 1, `the chain rotated: ${files.join(', ')}`);
    assert.equal(records.filter((m) => m.topic === 'file/opened').length, files.length, 'one file record per file');
  });
});
