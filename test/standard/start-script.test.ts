// Issue 18, point 5: `npm start` (scripts/start.js) stays right across restarts and ports: every start points the
// flows at the simulator it started (lh-server URLs, example 08's SIM_URL), also when the last ports are taken now;
// and Node-RED's update-notification question is switched off like the tours.
import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';

import { requestText } from '../support/http-text';

const root = path.resolve(__dirname, '..', '..');

interface Started {
  child: ChildProcess;
  editor: string;
  simA: string;
  simB: string;
  control: string;
  /** the control URL as printed: it must answer (issue 32 item 6: /sim alone was a 404) */
  printedControl: string;
}

/** `node scripts/start.js` with its own user dir and any free editor port; resolves once it prints the editor URL. */
function start(userDir: string): Promise<Started> {
  const env: NodeJS.ProcessEnv = { ...process.env, LH_USER_DIR: userDir, PORT: '0' };
  delete env.LH_PUBLIC_URL;
  const child = spawn(process.execPath, [path.join(root, 'scripts', 'start.js')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`scripts/start.js did not start within 60 s:\n${text}`)), 60_000);
    const onData = (c: Buffer): void => {
      text += c.toString('utf8');
      const editor = /Node-RED editor: (http:\/\/\S+?)\/?\s/.exec(text);
      const sim = /Simulator: A (\S+)\s+B (\S+)\s+control ((\S+?)\/sim\S*)/.exec(text);
      if (!editor || !sim) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve({ child, editor: editor[1], simA: sim[1], simB: sim[2], control: sim[4], printedControl: sim[3] });
    };
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`scripts/start.js exited (${code}):\n${text}`));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

async function stop(s: Started | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((resolve) => s.child.once('exit', resolve));
  s.child.kill('SIGINT');
  await exited;
}

type Node = Record<string, unknown> & { id: string; type: string };

async function deployedFlows(s: Started): Promise<Node[]> {
  const res = await requestText(`${s.editor}/flows`, { agent: false });
  assert.equal(res.status, 200, res.text);
  return JSON.parse(res.text) as Node[];
}

/** Every simulator address in the flows: lh-server URLs and SIM_URL of tab environments. */
function simulatorAddresses(flows: Node[]): { servers: string[]; simUrls: string[] } {
  const servers = flows.filter((n) => n.type === 'lh-server').flatMap((n) => [String(n.baseUrl), String(n.instrumentUrl)]);
  const simUrls = flows
    .filter((n) => n.type === 'tab' && Array.isArray(n.env))
    .flatMap((n) => (n.env as { name: string; value: string }[]).filter((v) => v.name === 'SIM_URL').map((v) => v.value));
  return { servers, simUrls };
}

function assertAimedAt(flows: Node[], s: Started, when: string): void {
  const { servers, simUrls } = simulatorAddresses(flows);
  assert.ok(servers.length >= 2 && simUrls.length >= 1, `${when}: the demo has an lh-server and example 08's SIM_URL`);
  for (let i = 0; i < servers.length; i += 2) assert.deepEqual([servers[i], servers[i + 1]], [s.simA, s.simB], when);
  assert.deepEqual([...new Set(simUrls)], [s.control], `${when}: SIM_URL is the started simulator's control address`);
}

describe('npm start across restarts and ports (issue 18 point 5)', function () {
  this.timeout(120_000);
  let userDir: string;
  let running: Started | undefined;
  let blocker: net.Server | undefined;
  before(function () {
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-start-'));
  });
  after(async function () {
    await stop(running);
    await new Promise((r) => (blocker ? blocker.close(r) : r(undefined)));
    fs.rmSync(userDir, { recursive: true, force: true });
  });

  it('points the flows at the simulator it started, also after a restart with the last ports taken', async function () {
    running = await start(userDir);
    assertAimedAt(await deployedFlows(running), running, 'first start');
    const first = running;
    await stop(running);

    // the simulator's last port is taken now (another program, a second checkout): it gets another one
    blocker = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker?.listen(Number(new URL(first.simA).port), '127.0.0.1', resolve));
    running = await start(userDir);
    assert.notEqual(running.simA, first.simA);
    assertAimedAt(await deployedFlows(running), running, 'restart');
  });

  it('prints a simulator control URL that answers (200, not 404)', async function () {
    running ??= await start(userDir);
    const res = await requestText(running.printedControl, { agent: false });
    assert.equal(res.status, 200, `${running.printedControl}: ${res.status}`);
  });

  it('does not ask about update notifications (telemetry off), as it shows no tours', async function () {
    running ??= await start(userDir);
    const res = await requestText(`${running.editor}/settings`, { agent: false });
    const settings = JSON.parse(res.text) as { telemetryEnabled?: boolean; editorTheme?: { tours?: boolean } };
    assert.equal(settings.editorTheme?.tours, false);
    assert.equal(settings.telemetryEnabled, false, 'the editor asks when telemetryEnabled is not false');
  });
});
