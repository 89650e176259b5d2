/**
 * A chain file (or checkpoint) larger than any string V8 makes (about 512 MiB): the package never writes one, but a file
 * put there, or garbage, is. `lh-audit verify` / `export` and a Node-RED reopening the chain read it whole into memory
 * and then failed with "Cannot create a string longer than 0x1fffffe8 characters", naming no file. They must refuse it
 * by its size, before reading it, naming the file (exit 2 for the CLI; the writer refuses the chain and says why).
 * The files here are sparse: no disk space is used.
 */
import assert from 'node:assert/strict';
import { constants } from 'buffer';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import { AuditLog, chainFile, checkpointFile } from '../../src/audit';
import { actionFields, KEY, tempDir } from '../audit/chain-support';

const CLI = path.resolve(__dirname, '..', '..', 'nodes', 'audit', 'cli.js');
const HUGE = constants.MAX_STRING_LENGTH + 1;

function lhAudit(...args: string[]): { code: number | null; err: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, err: r.stderr };
}

describe('audit: a chain file larger than a string', function () {
  this.timeout(20_000);
  let dir = '';
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const which of ['the last chain file', 'the checkpoint'] as const) {
    it(`${which}: lh-audit verify and export exit 2 naming it; the writer refuses the chain naming it`, async function () {
      dir = tempDir();
      const options = { dir, name: 'big', instrument: 'https://lh.example|', key: KEY };
      const log = new AuditLog(options);
      for (const f of actionFields(0)) await log.append(f);
      await log.close();
      const huge = which === 'the checkpoint' ? checkpointFile(dir, 'big') : chainFile(dir, 'big', 2);
      fs.closeSync(fs.openSync(huge, 'w'));
      fs.truncateSync(huge, HUGE);
      const rule = `${huge} is ${HUGE} bytes: larger than any file of an audit chain`;

      for (const command of which === 'the checkpoint' ? ['verify'] : ['verify', 'export']) {
        const r = lhAudit(command, chainFile(dir, 'big', 1));
        assert.equal(r.code, 2, `${command}: ${r.err}`);
        assert.ok(r.err.includes(rule), `${command}: ${r.err}`);
      }
      const next = new AuditLog(options);
      const broken: Error[] = [];
      next.on('broken', (err: Error) => broken.push(err));
      const refused = next.append(actionFields(1)[0]);
      if (which === 'the checkpoint') {
        // a checkpoint that is no checkpoint: the writer says so (checkpoint missing) and goes on with the chain
        const said: string[] = [];
        next.on('checkpoint-missing', (text: string) => said.push(text));
        await refused;
        await next.close();
        assert.ok(
          said.some((text) => text.includes(rule)),
          said.join('\n'),
        );
        return;
      }
      await assert.rejects(refused, (err: Error) => err.message.includes(rule));
      await next.close();
      assert.ok(broken.length === 1 && broken[0].message.includes(rule), String(broken[0]?.message));
    });
  }
});
