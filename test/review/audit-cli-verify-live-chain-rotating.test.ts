/**
 * `lh-audit verify` of a live chain (the README's example verifies the chain in Node-RED's own lh-audit dir) while the
 * writer starts a new file: the CLI listed the chain's files, then read the checkpoint, which the writer had meanwhile
 * moved to a record of the new file, not listed: "TAMPERED: … records #n to #m were removed from the end" of an honest
 * chain. The checkpoint must be read before the files are listed (a checkpoint only names records already in files).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import { chainFile, chainIndexes } from '../../src/audit';
import { tempDir } from '../audit/chain-support';
import { tsChildArgs } from '../support/ts-child';
import { LIVE, rotate } from './audit-cli-verify-live-chain-rotating-writer';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'nodes', 'audit', 'cli.js');
const PRELOAD = path.join(__dirname, 'audit-cli-verify-live-chain-rotating-preload.ts');

describe('lh-audit verify: a live chain starting a new file while it is verified', function () {
  this.timeout(30_000);
  let dir = '';
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('says OK (exit 0), not TAMPERED', async function () {
    dir = tempDir();
    await rotate(dir, 0);
    const before = chainIndexes(dir, LIVE.name).length;
    const r = spawnSync(
      process.execPath,
      tsChildArgs(CLI, ['verify', chainFile(dir, LIVE.name, 1), '--key', LIVE.key.toString()], [PRELOAD]),
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, LH_LIVE_DIR: dir } },
    );
    assert.equal(chainIndexes(dir, LIVE.name).length, before + 1, 'the writer started a new file while verify ran');
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /^OK: /);
  });
});
