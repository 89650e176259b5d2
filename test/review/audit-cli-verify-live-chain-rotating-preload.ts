/**
 * Preloaded into the lh-audit CLI by audit-cli-verify-live-chain-rotating.test.ts: the first time the CLI lists the
 * chain's directory, a writer (another process, as Node-RED is) goes on with the chain until it starts a new file and
 * moves its checkpoint there; the CLI goes on with the listing it had. A live chain rotating while it is verified.
 */
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';

import { tsChildArgs } from '../support/ts-child';

const dir = process.env.LH_LIVE_DIR ?? '';
const readdirSync = fs.readdirSync.bind(fs) as (...args: unknown[]) => unknown;
let rotated = false;
(fs as { readdirSync: unknown }).readdirSync = (...args: unknown[]): unknown => {
  const listed = readdirSync(...args);
  if (!rotated && path.resolve(String(args[0])) === dir) {
    rotated = true;
    execFileSync(process.execPath, tsChildArgs(path.join(__dirname, 'audit-cli-verify-live-chain-rotating-writer.ts'), [dir]), {
      cwd: path.resolve(__dirname, '..', '..'),
      stdio: 'inherit',
    });
  }
  return listed;
};
