/**
 * Redis topologies beyond one server, for the coordination tests: Sentinel and Cluster.
 *
 * A real Redis Sentinel setup for the coordination tests: a master, one replica of it and one `redis-server
 * --sentinel` watching the master (quorum 1, down after 1 s), each a child process on a free loopback port with its
 * own temp dir. `killMaster` SIGKILLs the master; the sentinel then promotes the replica.
 */
import { ChildProcess, execFileSync, spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import Redis from 'ioredis';

import { freePort } from './free-port';
import { redisServerBinary } from './redis-server';

export const SENTINEL_MASTER = 'lh-master';

/** redis-cli (it creates the cluster): beside redis-server, else on the PATH; undefined when neither has it. */
export function redisCliBinary(): string | undefined {
  const server = redisServerBinary();
  const beside = server ? path.join(path.dirname(server), 'redis-cli') : undefined;
  if (beside && fs.existsSync(beside)) return beside;
  try {
    return execFileSync('sh', ['-c', 'command -v redis-cli'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why a topology suite cannot run here (undefined: it can): it starts and kills its own redis-server processes, so
 * an external LH_REDIS_URL does not do, and a cluster needs redis-cli. The caller skips and prints it loudly.
 */
export function topologySkipReason(topology: 'sentinel' | 'cluster'): string | undefined {
  const what = topology === 'cluster' ? 'Redis Cluster' : 'Redis Sentinel';
  if (process.env.LH_REDIS_URL)
    return `the ${what} suite starts its own redis-server processes; unset LH_REDIS_URL and install redis-server to run it`;
  if (topology === 'cluster' && !redisCliBinary())
    return `the ${what} suite needs redis-cli (sudo apt-get install redis-tools, which comes with redis-server)`;
  return undefined;
}

/** Skips the calling suite when its topology cannot run here, with one loud line saying why and how to enable it. */
export function skipTopologyUnlessAvailable(context: Mocha.Context, topology: 'sentinel' | 'cluster'): void {
  const why = topologySkipReason(topology);
  if (!why) return;
  console.warn(`\n!!! SKIPPED ${why}.\n`);
  context.skip();
}

async function startServer(args: string[], ready: RegExp, dir: string): Promise<ChildProcess> {
  const binary = redisServerBinary();
  if (!binary) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const child = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (ready.test(output)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server ${args.join(' ')} exited (${String(code)}):\n${output}`)));
  });
  return child;
}

async function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export class SentinelHarness {
  private readonly children: ChildProcess[] = [];
  private master?: ChildProcess;
  private dir = '';
  masterPort = 0;
  replicaPort = 0;
  sentinelPort = 0;

  async start(): Promise<void> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-sentinel-'));
    const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'];
    this.masterPort = await freePort();
    this.master = await startServer(['--port', String(this.masterPort), ...common], /Ready to accept connections/, this.dir);
    this.children.push(this.master);
    this.replicaPort = await freePort();
    const replica = await startServer(
      ['--port', String(this.replicaPort), ...common, '--replicaof', '127.0.0.1', String(this.masterPort)],
      /MASTER <-> REPLICA sync: Finished with success/,
      this.dir,
    );
    this.children.push(replica);
    this.sentinelPort = await freePort();
    const conf = path.join(this.dir, 'sentinel.conf'); // the sentinel rewrites its config file: one of its own
    fs.writeFileSync(
      conf,
      [
        `port ${this.sentinelPort}`,
        'bind 127.0.0.1',
        `dir ${this.dir}`,
        `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${this.masterPort} 1`,
        `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
        `sentinel failover-timeout ${SENTINEL_MASTER} 5000`,
        '',
      ].join('\n'),
    );
    this.children.push(await startServer([conf, '--sentinel'], /\+monitor master/, this.dir));
  }

  /** Where the sentinel says the master is now (its port). */
  async masterNow(): Promise<number> {
    const sentinel = new Redis({ host: '127.0.0.1', port: this.sentinelPort, lazyConnect: true });
    try {
      await sentinel.connect();
      const addr = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER)) as [string, string];
      return Number(addr[1]);
    } finally {
      sentinel.disconnect();
    }
  }

  async killMaster(): Promise<void> {
    await kill(this.master);
  }

  async destroy(): Promise<void> {
    for (const child of this.children.splice(0)) await kill(child);
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A real Redis Cluster of three masters (no replicas), each a child on a free loopback port, slots spread by redis-cli. */
export class ClusterHarness {
  private readonly children: ChildProcess[] = [];
  private dir = '';
  ports: number[] = [];

  async start(): Promise<void> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-cluster-'));
    for (let i = 0; i < 3; i++) {
      const port = await freePort(10000); // its cluster bus listens on port + 10000
      const dir = path.join(this.dir, String(port));
      fs.mkdirSync(dir);
      this.children.push(
        await startServer(
          [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--save',
            '',
            '--appendonly',
            'no',
            '--protected-mode',
            'no',
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            path.join(dir, 'nodes.conf'),
          ],
          /Ready to accept connections/,
          dir,
        ),
      );
      this.ports.push(port);
    }
    const cli = redisCliBinary();
    if (!cli) throw new Error('redis-cli is not installed (apt-get install redis-tools)');
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        cli,
        ['--cluster', 'create', ...this.ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`redis-cli --cluster create failed (${String(code)}):\n${output}`)),
      );
    });
  }

  async destroy(): Promise<void> {
    for (const child of this.children.splice(0)) await kill(child);
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
