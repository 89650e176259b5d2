/**
 * A file chain's lock names its writer as `<pid>@<host>`, and a lock naming a live process was never taken over. In a
 * container (Docker, Kubernetes), Node-RED restarted after a SIGKILL or an OOM kill has the same host name and, most
 * often, the same pid as the process killed (PID 1, or the same small number every start): the lock it left named
 * the new process itself, which took it for its own second writer and refused the chain for good ("is being written
 * by process 7@…"): every instrument write refused until someone deleted the lock by hand, though the README says a
 * lock left by a killed process is taken over at the next start. A lock naming this pid and host but not this process
 * (an earlier process that had its pid) is stale; a second writer of this very process is still refused.
 */
import assert from 'assert';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { AuditLog, type RecordFields } from '../../src/audit';
import { KEY, readChain, tempDir, verify } from '../audit/chain-support';

const intent = (id: string): RecordFields => ({
  phase: 'intent',
  id,
  at: new Date().toISOString(),
  instrument: 'i',
  who: {},
  what: { api: 'A', method: 'PUT', operation: 'clear-errors', path: '/errors/clear-errors' },
});

describe('review: audit lock left by an earlier process with this pid', function () {
  let dir: string;
  beforeEach(function () {
    dir = tempDir();
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const [what, text] of [
    ['as this version writes it, another process', () => `${process.pid}@${os.hostname()} 0123456789abcdef`],
    ['as earlier versions wrote it', () => `${process.pid}@${os.hostname()}`],
  ] as const) {
    it(`a lock naming this pid and host (${what}) is taken over at open`, async function () {
      fs.writeFileSync(path.join(dir, 'one.lock'), text());
      const log = new AuditLog({ dir, name: 'one', instrument: 'i', key: KEY });
      await log.append(intent('a'));
      await log.close();
      assert.strictEqual(verify(readChain(dir, 'one')).ok, true);
      assert.strictEqual(fs.existsSync(path.join(dir, 'one.lock')), false, 'its own lock removed at close');
    });
  }

  it('a second writer of this very process is still refused', async function () {
    const first = new AuditLog({ dir, name: 'one', instrument: 'i', key: KEY });
    await first.append(intent('a'));
    const second = new AuditLog({ dir, name: 'one', instrument: 'i', key: KEY });
    await assert.rejects(second.append(intent('b')), /is being written by process \d+@/);
    await second.close();
    await first.close();
  });
});
