/**
 * The child of dsync-exit.test.ts: an intent and its outcome (lazy) appended to a chain in the given write mode, then
 * nothing more: no close(), the process ends once nothing keeps its event loop alive.
 */
import { AuditLog } from '../../src/audit';
import { actionFields, KEY } from './chain-support';

const [dir, writeMode] = process.argv.slice(2) as [string, 'datasync' | 'dsync' | 'sync'];
const log = new AuditLog({ dir, name: 'chain', instrument: 'i', key: KEY, writeMode });
void (async () => {
  const [intent, outcome] = actionFields(0);
  await log.append(intent);
  await log.append(outcome, { lazy: true });
  process.stdout.write('appended\n');
})();
