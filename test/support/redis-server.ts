/**
 * A real Redis for the coordination tests: a `redis-server` child on a free loopback port with its own temp dir (no
 * persistence), or the server `LH_REDIS_URL` names. Without either, `describeWithRedis` skips its suite and says so
 * in one loud console line (how to enable it), so a machine without Redis never passes the suite silently.
 */
import { ChildProcess, execFileSync, spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import Redis from 'ioredis';

import { Coordinator } from '../../src/coordination/coordinator';
import { freePort } from './free-port';
import { scanRedisKeyspace } from './secret-scan';
import { until } from './until';

/** The redis-server binary on the PATH, or undefined. */
export function redisServerBinary(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Whether the coordination suites can run here. */
export function redisAvailable(): boolean {
  return Boolean(process.env.LH_REDIS_URL) || redisServerBinary() !== undefined;
}

let saidSkipped = false;

/** `describe` when Redis is available; otherwise a skipped suite and one loud line naming how to enable it. */
export function describeWithRedis(title: string, body: (this: Mocha.Suite) => void): void {
  if (redisAvailable()) {
    describe(title, body);
    return;
  }
  if (!saidSkipped) {
    saidSkipped = true; // one line for all the coordination suites
    console.warn(
      `\n!!! SKIPPED the coordination suites (several Node-REDs through Redis): no redis-server on the PATH and LH_REDIS_URL unset. ` +
        `Enable it with \`sudo apt-get install redis-server\` (or set LH_REDIS_URL=redis://host:port).\n`,
    );
  }
  describe.skip(title, body);
}

/** One redis-server child (or the external server of LH_REDIS_URL, which `stop` and `pause` leave alone). */
export { freePort };

export class RedisHarness {
  private child?: ChildProcess;
  private dir?: string;
  url = '';
  port = 0;
  private paused = false;
  readonly external = Boolean(process.env.LH_REDIS_URL);

  /** `args`: more redis-server arguments (e.g. `--rename-command INFO ""`), for a child started here. */
  constructor(private readonly args: readonly string[] = []) {}

  /**
   * Starts it on a free port (again on the same port after `stop`, so clients reconnect to the same URL). The port is
   * below the ephemeral range, but another test process may be probing it (free-port.ts binds for a moment) or hold it
   * while the server is down: a first start takes another port, a restart tries the same one again for up to 10 s.
   */
  async start(): Promise<void> {
    if (this.external) {
      this.url = String(process.env.LH_REDIS_URL);
      return;
    }
    const binary = redisServerBinary();
    if (!binary) throw new Error('redis-server is not installed (apt-get install redis-server)');
    const restart = this.port !== 0;
    if (!restart) this.port = await freePort();
    this.dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'lh-redis-'));
    for (let attempt = 1; ; attempt++) {
      try {
        await this.spawn(binary);
        break;
      } catch (err) {
        if (!/Address already in use/.test((err as Error).message) || attempt >= 40) throw err;
        if (restart) await new Promise((resolve) => setTimeout(resolve, 250));
        else this.port = await freePort();
      }
    }
    this.url = `redis://127.0.0.1:${this.port}`;
  }

  private async spawn(binary: string): Promise<void> {
    const child = spawn(
      binary,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir as string,
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
        ...this.args,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (/Ready to accept connections/.test(output)) resolve();
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`redis-server exited (${String(code)}):\n${output}`)));
    });
  }

  /** Stops the server (SIGKILL: nothing is saved, clients see the connection drop). */
  async stop(): Promise<void> {
    const child = this.child;
    // what the Node-REDs of the test left in Redis holds no secret (a frozen server is not asked)
    if (child && child.exitCode === null && !this.paused) await scanRedisKeyspace(this.url, this.url);
    this.child = undefined;
    this.paused = false;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGCONT');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Waits until the server process has exited by itself (after SHUTDOWN), at most `ms`; stop() then ends what is left. */
  async exited(ms = 10_000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise((resolve) => child.once('exit', resolve)),
      new Promise((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing answers (a network partition, as clients see it). */
  pause(): void {
    this.paused = true;
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.paused = false;
    this.child?.kill('SIGCONT');
  }

  /** Stops the server and removes its temp dir. */
  async destroy(): Promise<void> {
    await this.stop();
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

/**
 * Registers the hooks of a describe block on one real Redis: a RedisHarness started with a client on it in before(),
 * the client disconnected and the server destroyed in after(). Its `redis` is set from before() on.
 */
export function useRedis(): { harness: RedisHarness; redis: Redis } {
  const used = { harness: new RedisHarness() } as { harness: RedisHarness; redis: Redis };
  before(async function () {
    await used.harness.start();
    used.redis = new Redis(used.harness.url);
  });
  after(async function () {
    used.redis?.disconnect();
    await used.harness.destroy();
  });
  return used;
}

/** A Redis of `useOlderDumps()`: `snapshot()` saves and copies dump.rdb, `restartFrom(copy)` restarts on that copy. */
export interface OlderDumps {
  harness: RedisHarness;
  redis: Redis;
  snapshot(): Promise<string>;
  restartFrom(copy: string): Promise<void>;
  /** Until a client other than `redis` is connected again (a Node-RED under test reconnects within 2 s of a restart). */
  reconnected(): Promise<void>;
}

/**
 * A real Redis that a test restarts on an older dump (Redis restored from a stale snapshot), skipped with an external
 * Redis (LH_REDIS_URL). `snapshot()`: SAVE, then a copy of dump.rdb; `restartFrom(copy)`: the server killed (nothing
 * saved) and started on that copy: a new run id, the writes since the dump gone. `redis` is set from before() on.
 */
export function useOlderDumps(): OlderDumps {
  let dir = '';
  let run = 0;
  const used = {
    harness: new RedisHarness(),
    async snapshot() {
      await used.redis.save();
      const copy = path.join(dir, `older-${++run}.rdb`);
      fs.copyFileSync(path.join(dir, 'dump.rdb'), copy);
      return copy;
    },
    async restartFrom(copy: string) {
      await used.harness.stop();
      fs.copyFileSync(copy, path.join(dir, 'dump.rdb'));
      await used.harness.start();
      await used.redis.ping();
    },
    async reconnected() {
      await until(
        async () =>
          String(await used.redis.client('LIST'))
            .trim()
            .split('\n').length > 1,
        'the Node-RED reconnected to Redis',
        10000,
      );
    },
  } as OlderDumps;
  before(async function () {
    if (used.harness.external) this.skip(); // the test restarts the server on an older dump
    await used.harness.start();
    used.redis = new Redis(used.harness.url, { maxRetriesPerRequest: null });
    dir = String(((await used.redis.config('GET', 'dir')) as string[])[1]);
  });
  after(async function () {
    used.redis?.disconnect();
    await used.harness.destroy();
  });
  return used;
}

/**
 * Coordinators on the Redis of `useRedis()` (lease 60 s: a test steps their rounds by hand), each closed after its test.
 * `coordinator(replica, prefix)` makes one.
 */
export function useCoordinators(db: {
  redis: Redis;
}): (replica: string, prefix: string, clock?: { now: () => number }) => Coordinator {
  const made: Coordinator[] = [];
  afterEach(async function () {
    for (const c of made.splice(0)) await c.close();
  });
  return (replica, prefix, clock) => {
    const c = new Coordinator({ redis: db.redis, prefix, leaseMs: 60000, replica, ...clock });
    made.push(c);
    return c;
  };
}
