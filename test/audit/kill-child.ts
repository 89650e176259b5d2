/**
 * The child of kill.test.ts: a client with an audit trail sending instrument-changing requests to the simulator as
 * fast as it can (8 at a time) until it is killed; prints `durable <seq> <hash>` for every record once it is on disk.
 */
import { AuditLog, AuditRecord, AuditTrail } from '../../src/audit';
import { LiquidHandlerClient } from '../../src/client';

const [dir, baseUrl] = process.argv.slice(2);
const log = new AuditLog({ dir, name: 'killed', instrument: baseUrl, key: Buffer.from('kill-key'), maxFileBytes: 256 * 1024 });
log.on('record', (r: AuditRecord) => process.stdout.write(`durable ${r.seq} ${r.hash}\n`));
const client = new LiquidHandlerClient({
  baseUrl,
  credentials: { username: 'admin', password: process.env.LH_KILL_PASSWORD },
  audit: new AuditTrail(log, { instrument: baseUrl }),
});

async function worker(): Promise<void> {
  for (;;) await client.prep.clearErrors().catch(() => undefined);
}
for (let i = 0; i < 8; i++) void worker();
