/**
 * A real Node-RED in a child process: red.js of the Node-RED under test (node-red, or node-red-5 under
 * scripts/nr5.js) with this repository as nodesDir, on a fresh user dir holding the flows (and credentials) given. For
 * what only a whole Node-RED shows: adminAuth on the editor's routes, the process surviving a request.
 */
import { ChildProcess, spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { NODE_RED_PACKAGE } from './runtime';

const root = path.resolve(__dirname, '..', '..');
const redDir = path.dirname(require.resolve(`${NODE_RED_PACKAGE}/package.json`));
const redJs = path.join(redDir, 'red.js');
const bcrypt = require(require.resolve('bcryptjs', { paths: [redDir] })) as {
  hashSync(s: string, rounds: number): string;
};

/** A password as adminAuth's `users` take it (bcrypt, Node-RED's own bcryptjs). */
export function adminPasswordHash(password: string): string {
  return bcrypt.hashSync(password, 8);
}

export interface RedProcessOptions {
  port: number;
  flows: unknown[];
  /** flows_cred.json, by node id (unencrypted: credentialSecret false) */
  credentials?: Record<string, unknown>;
  /** more of settings.js (adminAuth, …) */
  settings?: Record<string, unknown>;
  /** the user dir's name in the temp folder */
  prefix?: string;
}

export interface RedProcess {
  child: ChildProcess;
  userDir: string;
  /** everything it printed so far (stdout and stderr) */
  output(): string;
  /** ends it (SIGTERM) if it still runs, and removes its user dir */
  stop(): Promise<void>;
}

/** Starts it and resolves once its log says the flows run and the server listens; rejects if it ends first. */
export async function startRedProcess(options: RedProcessOptions): Promise<RedProcess> {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), options.prefix ?? 'lh-red-'));
  fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(options.flows));
  if (options.credentials) fs.writeFileSync(path.join(userDir, 'flows_cred.json'), JSON.stringify(options.credentials));
  const settings = {
    uiHost: '127.0.0.1',
    uiPort: options.port,
    userDir,
    flowFile: 'flows.json',
    nodesDir: [root],
    credentialSecret: false,
    logging: { console: { level: 'info', metrics: false, audit: false } },
    editorTheme: { tours: false },
    ...options.settings,
  };
  const settingsFile = path.join(userDir, 'settings.js');
  fs.writeFileSync(settingsFile, `module.exports = ${JSON.stringify(settings, null, 2)};\n`);
  const child = spawn(process.execPath, [redJs, '--settings', settingsFile, '--userDir', userDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(userDir, { recursive: true, force: true });
  };
  // an event, not a sleep: red.js starts the flows before it listens, so "Started flows" alone raced the listen on a
  // loaded CI machine
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  try {
    await new Promise<void>((resolve, reject) => {
      const ready = (): void => {
        if (/Started flows/.test(output) && /Server now running/.test(output)) resolve();
      };
      child.stdout?.on('data', ready);
      child.stderr?.on('data', ready);
      child.once('exit', (code) => reject(new Error(`node-red exited (${String(code)}):\n${output}`)));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { child, userDir, output: () => output, stop };
}
