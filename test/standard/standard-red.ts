/**
 * A standard Node-RED, as a user runs one: this package packed with `npm pack` (once per test run), installed from the
 * tarball with npm into a fresh user directory (only the core nodes, plus the packages a test names), and Node-RED
 * started from this repository's devDependencies as a child process (`node red.js --settings …`) on an ephemeral
 * loopback port. Flows are deployed through the admin API, as the editor does. Nothing of the `npm start` sandbox
 * (no nodesDir, no LH_PUBLIC_URL) is used.
 */
import { ChildProcess, execFile, spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { exampleFile, exampleFilesIn } from '../support/example-files';
import { requestText, TextResponse } from '../support/http-text';

const root = path.resolve(__dirname, '..', '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-standard-'));
process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));

export type FlowNode = Record<string, unknown> & { id: string; type: string };

function run(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

let packed: Promise<string> | undefined;
/** The package as it is published: `npm pack` of the built checkout (`npm test` builds first), once per run. */
export function tarball(): Promise<string> {
  packed ??= (async () => {
    if (!fs.existsSync(path.join(root, 'nodes', 'nodes')))
      throw new Error('nodes/ is missing: run `node scripts/build.js` first');
    const dest = path.join(work, 'pack');
    fs.mkdirSync(dest);
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dest, '--loglevel=error'], root);
    const file = fs.readdirSync(dest).find((f) => f.endsWith('.tgz'));
    if (!file) throw new Error('npm pack made no tarball');
    return path.join(dest, file);
  })();
  return packed;
}

/** The version of a devDependency installed in this checkout (so the user dir gets the tested one, from npm's cache). */
export function installedVersion(pkg: string): string {
  return (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string })
    .version;
}

const userDirs = new Map<string, Promise<string>>();
/**
 * A user directory with this package installed from the tarball (`npm install <tgz> [extras]`, as a user does in
 * ~/.node-red), shared by the tests that ask for the same extras; each Node-RED gets its own copy of it.
 */
function installed(extras: string[]): Promise<string> {
  const key = extras.join(' ');
  let dir = userDirs.get(key);
  if (!dir) {
    dir = (async () => {
      const d = fs.mkdtempSync(path.join(work, 'installed-'));
      fs.writeFileSync(path.join(d, 'package.json'), JSON.stringify({ name: 'node-red-project', private: true }));
      await run(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', await tarball(), ...extras],
        d,
      );
      return d;
    })();
    userDirs.set(key, dir);
  }
  return dir;
}

/** A fresh user dir: package.json and node_modules of an installed one (node_modules linked, not copied: read only). */
export async function freshUserDir(extras: string[] = []): Promise<string> {
  const base = await installed(extras);
  const dir = fs.mkdtempSync(path.join(work, 'user-'));
  fs.copyFileSync(path.join(base, 'package.json'), path.join(dir, 'package.json'));
  fs.symlinkSync(path.join(base, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

export interface StandardRed {
  url: string;
  userDir: string;
  /** everything Node-RED wrote to stdout and stderr so far */
  log(): string;
  /** Deploys `flows` (a full deploy through POST /flows; credentials inside the nodes, as the editor sends them), and
   * resolves with the log lines of this deploy once Node-RED has said "Started flows" or "Waiting for missing types". */
  deploy(flows: FlowNode[]): Promise<string>;
  request(method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<TextResponse>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** environment variables for Node-RED (LH_PUBLIC_URL and LIMS_TOKEN of the test's environment are removed) */
  env?: Record<string, string>;
  /** the port to listen on (0: any free one) */
  port?: number;
  /** which Node-RED of the devDependencies: node-red (4.1) or node-red-3 (3.1) */
  nodeRed?: string;
}

/**
 * The core nodes of the Node-RED `red` (its @node-red/nodes), seen through a link outside this checkout. Node-RED
 * also loads every node package of each node_modules folder above its core nodes: from this checkout's node_modules
 * that would be node-red-node-email and the dashboard (devDependencies), which a user's Node-RED does not have.
 */
function coreNodes(red: string): string {
  const real = path.dirname(require.resolve('@node-red/nodes', { paths: [path.dirname(red)] }));
  const link = path.join(work, `core-nodes-${path.basename(path.dirname(red))}`);
  if (!fs.existsSync(link)) fs.symlinkSync(real, link, 'dir');
  return link;
}

/** Starts Node-RED on `userDir` and resolves once it listens and has started its flows (none, or the saved ones). */
export async function startRed(userDir: string, options: StartOptions = {}): Promise<StandardRed> {
  const red = require.resolve(`${options.nodeRed ?? process.env.LH_NODE_RED ?? 'node-red'}/red.js`, { paths: [root] });
  const settings = path.join(userDir, 'settings.js');
  fs.writeFileSync(
    settings,
    `module.exports = ${JSON.stringify({
      uiHost: '127.0.0.1',
      uiPort: options.port ?? 0,
      flowFile: 'flows.json',
      coreNodesDir: coreNodes(red),
      logging: { console: { level: 'info', metrics: false, audit: false } },
      editorTheme: { tours: false },
    })};\n`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.LH_PUBLIC_URL; // the environment of a Node-RED the user starts: nothing this test run happens to have
  delete env.LIMS_TOKEN;
  Object.assign(env, { NODE_RED_DISABLE_TELEMETRY: '1' }, options.env ?? {});
  const child: ChildProcess = spawn(process.execPath, [red, '--userDir', userDir, '--settings', settings], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (c: Buffer): void => {
    text += c.toString('utf8');
    for (const l of [...listeners]) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  /** Resolves with the text logged from `from` on, once `test` finds what it waits for in it. */
  const waitLog = (from: number, test: (since: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const since = text.slice(from);
        if (test(since)) {
          done();
          resolve(since);
        } else if (child.exitCode !== null) {
          done();
          reject(new Error(`Node-RED exited (${child.exitCode}) while waiting for ${what}:\n${text}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`Node-RED did not log ${what} within ${timeoutMs} ms:\n${text}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        listeners.delete(check);
        child.off('exit', check);
      };
      listeners.add(check);
      child.on('exit', check);
      check();
    });

  const flowsStarted = (since: string): boolean => /Started flows|Waiting for missing types/.test(since);
  const boot = await waitLog(0, (s) => /Server now running at http:\/\/127\.0\.0\.1:\d+/.test(s) && flowsStarted(s), 'its start');
  const url = `http://127.0.0.1:${/Server now running at http:\/\/127\.0\.0\.1:(\d+)/.exec(boot)?.[1] ?? ''}`;

  const request = (
    method: string,
    urlPath: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<TextResponse> => {
    const data = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    return requestText(
      `${url}${urlPath}`,
      {
        method,
        agent: false,
        headers: data ? { 'Content-Type': 'application/json', 'Content-Length': String(data.length), ...headers } : headers,
      },
      data,
    );
  };

  return {
    url,
    userDir,
    log: () => text,
    async deploy(flows) {
      const from = text.length;
      const res = await request('POST', '/flows', flows, { 'Node-RED-Deployment-Type': 'full' });
      if (res.status !== 200 && res.status !== 204) throw new Error(`deploy: ${res.status} ${res.text}`);
      return waitLog(from, flowsStarted, '"Started flows" after the deploy');
    },
    request,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT');
        await exited;
      }
    },
  };
}

/** The example file (examples/ or examples-extra/) whose name starts with `prefix`, as the user imports it. */
export function example(prefix: string): FlowNode[] {
  return JSON.parse(fs.readFileSync(exampleFile(prefix).full, 'utf8')) as FlowNode[];
}

/** The example files' names: of Import > Examples (`examples/`), of `examples-extra/`, or of both (the default). */
export function exampleFiles(dir?: 'examples' | 'examples-extra'): string[] {
  return exampleFilesIn(dir ? [dir] : undefined).map((f) => f.file);
}

/** The packages an example file says it needs in its title: `(needs node-red-node-email)`. */
export function neededPackages(file: string): string[] {
  const named = /\(needs ([^)]+)\)/.exec(file)?.[1];
  if (!named) return [];
  if (named.startsWith('Dashboard 2.0')) return ['@flowfuse/node-red-dashboard'];
  return named.split(/,\s*/);
}

/** Every package an example's title names, at the version this checkout tests with (from npm's cache). */
export function namedPackages(): string[] {
  return [...new Set(exampleFiles().flatMap(neededPackages))].sort().map((p) => `${p}@${installedVersion(p)}`);
}
