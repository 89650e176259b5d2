/**
 * The child of audit-crash-at-rotation-leaves-file-begun.test.ts: appends intents and outcomes (4 at a time) to a
 * chain of small files and kills itself with SIGKILL where a crash at a rotation falls: `created`, once the new file
 * `dieAt` exists and before anything is written to it; `torn`, in the middle of the first write to it (its file record
 * cut short). Prints `durable <seq> <hash>` for every record on disk.
 * Its actions are numbered from `firstAction`.
 */
import fs from 'fs';

import { AuditLog, type AuditRecord, chainFile } from '../../src/audit';
import { actionFields, KEY } from '../audit/chain-support';

const [dir, dieAtText, how, writeMode, firstAction] = process.argv.slice(2);
const target = chainFile(dir, 'crash', Number(dieAtText));

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}

/** The first write to the file `fd`: a part of it, then the kill. */
function tornWriteTo(fd: number): void {
  const writeSync = fs.writeSync.bind(fs) as (...args: unknown[]) => number;
  (fs as { writeSync: unknown }).writeSync = (...args: unknown[]): number => {
    if (args[0] !== fd) return writeSync(...args);
    const [, buf, offset] = args as [number, Buffer, number];
    writeSync(fd, buf, offset, 17, null);
    return die();
  };
}

const open = fs.promises.open.bind(fs.promises);
fs.promises.open = async (...args: Parameters<typeof open>): Promise<fs.promises.FileHandle> => {
  const fh = await open(...args);
  if (args[0] !== target) return fh;
  if (how === 'created') die();
  tornWriteTo(fh.fd);
  const write = fh.write.bind(fh) as (buf: Buffer, offset: number, length: number) => Promise<{ bytesWritten: number }>;
  (fh as { write: unknown }).write = async (buf: Buffer, offset: number): Promise<never> => {
    await write(buf, offset, 17);
    return die();
  };
  return fh;
};

const log = new AuditLog({
  dir,
  name: 'crash',
  instrument: 'https://lh.example|',
  key: KEY,
  maxFileBytes: 1200,
  writeMode: writeMode as 'datasync' | 'dsync' | 'sync',
});
log.on('record', (r: AuditRecord) => process.stdout.write(`durable ${r.seq} ${r.hash}\n`));
let next = Number(firstAction); // the actions' ids: a restarted child's must be new ones
async function worker(): Promise<void> {
  for (;;) {
    const [intent, outcome] = actionFields(next++);
    await log.append(intent);
    void log.append(outcome, { lazy: true }).catch(() => undefined);
  }
}
for (let i = 0; i < 4; i++) void worker();
