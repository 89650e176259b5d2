/**
 * A process killed with SIGKILL in the middle of audited writes leaves a chain that verifies up to its last complete
 * record (a torn last line is reported as torn, not as tampering), every record it had reported durable is there
 * unchanged, and a new writer continues the same chain.
 */
import assert from 'assert';
import { ChildProcessByStdio, spawn } from 'child_process';
import fs from 'fs';
import path from 'path';
import { Readable } from 'stream';

import { AuditLog } from '../../src/audit';
import { Simulator } from '../../src/simulator';
import { USER } from '../support/runtime';
import { tsChildArgs } from '../support/ts-child';
import { KEY as KEY_SUPPORT, readChain, tempDir, verify, writeChain } from './chain-support';

const KEY = Buffer.from('kill-key');

describe('audit: a writer killed with SIGKILL mid-write', function () {
  const sim = new Simulator();
  let dir: string;
  before(async function () {
    await sim.start();
  });
  after(async function () {
    await sim.stop();
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const round of [1, 2, 3]) {
    it(`round ${round}: the chain verifies up to the last complete record and nothing reported durable is missing`, async function () {
      this.timeout(60_000);
      dir = tempDir();
      const child = spawnChild('kill-child.ts', dir, sim.baseUrl);
      const durable = await killAfter(child, 150 * round);

      const chain = readChain(dir, 'killed');
      const report = verify(chain, KEY);
      assert.strictEqual(report.ok, true, report.firstBad?.reason);
      assert.ok(report.records >= durable.size, `${report.records} records on disk, ${durable.size} reported durable`);
      const onDisk = hashesOf(chain);
      for (const [seq, hash] of durable) assert.strictEqual(onDisk.get(seq), hash, `record #${seq} was reported durable`);

      // the next writer continues the chain (in a new file when the last line is torn)
      const next = new AuditLog({ dir, name: 'killed', instrument: sim.baseUrl, key: KEY, maxFileBytes: 256 * 1024 });
      await next.append({
        phase: 'intent',
        id: 'after-restart',
        at: new Date().toISOString(),
        instrument: sim.baseUrl,
        who: { node: 'n1' },
        what: { api: 'A', method: 'PUT', operation: 'clear-errors', path: '/errors/clear-errors' },
      });
      await next.close();
      const continued = verify(readChain(dir, 'killed'), KEY);
      assert.strictEqual(continued.ok, true, continued.firstBad?.reason);
      assert.strictEqual(
        continued.records,
        report.records + (report.torn.length > 0 ? 2 : 1),
        'one more record (and a file record after a torn line)',
      );
    });
  }

  it('a Node-RED process killed mid-writes: its chain verifies and every record it reported durable is there', async function () {
    this.timeout(90_000);
    dir = tempDir();
    const userDir = tempDir('lh-audit-red-');
    let child: ChildProcessByStdio<null, Readable, null> | undefined;
    try {
      child = spawnChild('red-child.ts', dir, sim.baseUrl, userDir);
      const durable = await killAfter(child, 400);
      const name = fs
        .readdirSync(dir)
        .find((f) => /\.000001\.jsonl$/.test(f))
        ?.replace(/\.000001\.jsonl$/, '');
      assert.ok(name, 'the Node-RED process wrote a chain');
      const chain = readChain(dir, name);
      const report = verify(chain, KEY);
      assert.strictEqual(report.ok, true, report.firstBad?.reason);
      assert.strictEqual(report.checkpoint, 'verified');
      const onDisk = hashesOf(chain);
      for (const [seq, hash] of durable) assert.strictEqual(onDisk.get(seq), hash, `record #${seq} was reported durable`);
      // the Node-RED that starts next continues the chain
      const next = new AuditLog({ dir, name, instrument: sim.baseUrl, key: KEY });
      await next.append({
        phase: 'intent',
        id: 'after-restart',
        at: new Date().toISOString(),
        instrument: sim.baseUrl,
        who: {},
        what: { api: 'A', method: 'PUT', operation: 'clear-errors', path: '/errors/clear-errors' },
      });
      await next.close();
      assert.strictEqual(verify(readChain(dir, name), KEY).ok, true);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      fs.rmSync(userDir, { recursive: true, force: true });
    }
  });

  it('one writer per chain: a second writer is refused while the first runs, and takes over after it closed', async function () {
    dir = tempDir();
    const intent = {
      phase: 'intent' as const,
      id: 'a',
      at: new Date().toISOString(),
      instrument: 'i',
      who: {},
      what: { api: 'A' as const, method: 'PUT', operation: 'clear-errors', path: '/errors/clear-errors' },
    };
    const first = new AuditLog({ dir, name: 'one', instrument: 'i', key: KEY_SUPPORT });
    await first.append(intent);
    const second = new AuditLog({ dir, name: 'one', instrument: 'i', key: KEY_SUPPORT });
    await assert.rejects(second.append(intent), /is being written by process \d+@/);
    await second.close();
    await first.close();
    const third = new AuditLog({ dir, name: 'one', instrument: 'i', key: KEY_SUPPORT });
    await third.append({ ...intent, id: 'b' });
    await third.close();
    assert.strictEqual(verify(readChain(dir, 'one')).ok, true);
  });

  it('after a torn last line the next writer starts a new file that links to the last complete record', async function () {
    const written = await writeChain(20);
    dir = written.dir;
    const [first] = readChain(dir, written.name).files;
    fs.appendFileSync(path.join(dir, first.name), '{"v":1,"seq":21,"pr');
    const next = new AuditLog({ dir, name: written.name, instrument: 'i', key: KEY_SUPPORT });
    await next.append({
      phase: 'intent',
      id: 'after-crash',
      at: new Date().toISOString(),
      instrument: 'i',
      who: { node: 'n1' },
      what: { api: 'A', method: 'PUT', operation: 'clear-errors', path: '/errors/clear-errors' },
    });
    await next.close();
    const chain = readChain(dir, written.name);
    assert.strictEqual(chain.files.length, 2, 'a new file after the torn one');
    const report = verify(chain);
    assert.strictEqual(report.ok, true, report.firstBad?.reason);
    assert.strictEqual(report.checkpoint, 'verified');
    assert.deepStrictEqual(report.torn, [{ file: first.name, line: first.text.split('\n').length }]);
    assert.strictEqual(report.records, 20 + 1 + 2, 'the 20 records, the first file record, the new file record and the intent');
  });
});

/** Starts a child test script of this folder (`script` with `args`) as a separate Node process; its stdout is piped. */
function spawnChild(script: string, ...args: string[]): ChildProcessByStdio<null, Readable, null> {
  return spawn(process.execPath, tsChildArgs(path.join(__dirname, script), args), {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { ...process.env, LH_KILL_PASSWORD: USER.password },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Reads `durable <seq> <hash>` lines until `target` records, then SIGKILLs the child; resolves once it is gone. */
function killAfter(child: ChildProcessByStdio<null, Readable, null>, target: number): Promise<Map<number, string>> {
  const durable = new Map<number, string>();
  let buffered = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the child ended by itself (${String(code)})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const [word, seq, hash] = line.split(' ');
        if (word === 'durable') durable.set(Number(seq), hash);
      }
      if (durable.size >= target && child.exitCode === null && !child.killed) {
        child.removeAllListeners('exit');
        child.once('exit', () => resolve(durable));
        child.kill('SIGKILL');
      }
    });
  });
}

function hashesOf(chain: ReturnType<typeof readChain>): Map<number, string> {
  return new Map(
    chain.files.flatMap((f) =>
      f.text
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l) as { seq: number; hash: string })
        .map((r) => [r.seq, r.hash] as const),
    ),
  );
}
