/** The writer of audit-cli-verify-live-chain-rotating.test.ts: goes on with the chain in `dir` into a new file. */
import { AuditLog, chainIndexes } from '../../src/audit';
import { actionFields, KEY } from '../audit/chain-support';

export const LIVE = { name: 'live', instrument: 'https://lh.example|', key: KEY, maxFileBytes: 1500 };

/** Appends actions numbered from `from` until the chain has one file more than it had; closes. */
export async function rotate(dir: string, from: number): Promise<void> {
  const log = new AuditLog({ dir, ...LIVE });
  const files = chainIndexes(dir, LIVE.name).length;
  for (let i = from; chainIndexes(dir, LIVE.name).length <= files; i++) for (const f of actionFields(i)) await log.append(f);
  await log.close();
}

if (require.main === module) {
  rotate(process.argv[2], 1000).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
