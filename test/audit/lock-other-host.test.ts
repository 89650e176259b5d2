/**
 * One writer per chain file, told by its lock (`<pid>@<host> <token>`). A lock of another host (a container recreated
 * under a new host name on the same volume, or a second Node-RED elsewhere) is never taken over: from here a Node-RED
 * that is gone cannot be told from one that is paused and writes again when it resumes. The refusal says how to end it
 * (the lock file to remove once no Node-RED writes there, then a redeploy), and leaves the lock as it was; a lock of
 * this host whose process is gone is taken over, as before.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { AuditLog, type RecordFields } from '../../src/audit';
import { Rng } from '../support/prng';
import { KEY, readChain, tempDir, verify } from './chain-support';

const NAME = 'one';

const intent = (id: string): RecordFields => ({
  phase: 'intent',
  id,
  at: new Date().toISOString(),
  instrument: 'i',
  who: {},
  what: { api: 'A', method: 'PUT', operation: 'clear-errors', path: '/errors/clear-errors' },
});

/** A pid that ran and is gone. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid ?? 999_999;
}

type Holder = 'other-host' | 'no-writer' | 'live-here' | 'gone-here' | 'my-pid-earlier';

function holderText(kind: Holder, rng: Rng): string {
  const token = rng.next().toString(36).slice(2);
  switch (kind) {
    case 'other-host':
      return `${rng.pick([process.pid, process.ppid, 1, deadPid()])}@${rng.pick(['nodered-7f9c', 'lab-pc.local', os.hostname() + 'x'])} ${token}`;
    case 'no-writer':
      return rng.pick(['', '   ', 'garbage', 'x12@', '12']);
    case 'live-here':
      return `${process.ppid}@${os.hostname()} ${token}`;
    case 'gone-here':
      // a lock of this host naming no live process (an altered pid included)
      return rng.pick([`${deadPid()}@${os.hostname()} ${token}`, `@${os.hostname()}`, `x${process.pid}@${os.hostname()}`]);
    case 'my-pid-earlier':
      return `${process.pid}@${os.hostname()}${rng.chance(0.5) ? ` ${token}` : ''}`;
  }
}

describe('audit chain file: a lock of another host', function () {
  it("seeded: refused with the way out (the lock file named, left as it was) unless it is this host's and its process is gone", async function () {
    this.timeout(60_000);
    const kinds: Holder[] = ['other-host', 'no-writer', 'live-here', 'gone-here', 'my-pid-earlier'];
    const seen = new Set<Holder>();
    for (let seed = 1; seed <= 60; seed++) {
      const rng = new Rng(seed);
      const kind = rng.pick(kinds);
      seen.add(kind);
      const dir = tempDir();
      try {
        const lock = path.join(dir, `${NAME}.lock`);
        const holder = holderText(kind, rng);
        fs.writeFileSync(lock, holder);
        const log = new AuditLog({ dir, name: NAME, instrument: 'i', key: KEY });
        const what = `seed ${seed}: ${kind} ${JSON.stringify(holder)}`;
        if (kind === 'gone-here' || kind === 'my-pid-earlier') {
          await log.append(intent('a'));
          await log.close();
          assert.equal(fs.existsSync(lock), false, `${what}: taken over, and released at close`);
          continue;
        }
        const err = await log.append(intent('a')).then(
          () => assert.fail(`${what}: written under another's lock`),
          (e: Error) => e,
        );
        await log.close();
        assert.equal(fs.readFileSync(lock, 'utf8'), holder, `${what}: the lock is left as it was`);
        assert.equal(readChain(dir, NAME).files.length, 0, `${what}: nothing written`);
        if (kind === 'live-here') assert.match(err.message, /is being written by process \d+@/, what);
        else {
          assert.ok(
            err.message.includes(`remove the lock file ${lock} once no Node-RED writes in ${dir}`),
            `${what}: ${err.message}`,
          );
          assert.match(err.message, /redeploy/, what);
          if (kind === 'other-host') assert.match(err.message, /of the host \S+, not this one/, `${what}: ${err.message}`);
          else assert.match(err.message, /names no writer/, `${what}: ${err.message}`);
          // done as it says: the next writer takes the chain
          fs.rmSync(lock);
          const next = new AuditLog({ dir, name: NAME, instrument: 'i', key: KEY });
          await next.append(intent('b'));
          await next.close();
          assert.equal(verify(readChain(dir, NAME)).ok, true, what);
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    assert.equal(seen.size, kinds.length, [...seen].join(', '));
  });
});
