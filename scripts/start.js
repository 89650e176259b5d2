#!/usr/bin/env node
'use strict';
// `npm start`: the simulator plus a Node-RED (127.0.0.1 only) with this package and the example flows deployed.
const fs = require('fs');
const net = require('net');
const path = require('path');
const http = require('http');
const { spawn } = require('child_process');
const { randomBytes } = require('crypto');

const root = path.resolve(__dirname, '..');
// LH_USER_DIR: another Node-RED user directory (the browser test uses a fresh temporary one).
const userDir = process.env.LH_USER_DIR ? path.resolve(process.env.LH_USER_DIR) : path.join(root, '.run', 'node-red');
const host = '127.0.0.1';

function freePort(preferred) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => {
      const any = net.createServer();
      any.listen(0, host, () => {
        const { port } = any.address();
        any.close(() => resolve(port));
      });
    });
    probe.listen(preferred, host, () => {
      const { port } = probe.address(); // the port itself, also when 0 asked for any free one
      probe.close(() => resolve(port));
    });
  });
}

function request(method, url, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(
      url,
      {
        method,
        headers: data
          ? { 'Content-Type': 'application/json', 'Content-Length': data.length, 'Node-RED-Deployment-Type': 'full' }
          : {},
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

async function waitForEditor(url, child) {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`Node-RED exited with code ${child.exitCode}`);
    try {
      const res = await request('GET', `${url}settings`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('Node-RED did not start within 60 s');
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** `${NAME:-default}` as its default: the examples' URLs (`http://${LH_SIM_HOST:-127.0.0.1}:${LH_SIM_PORT:-8090}`). */
function withDefaults(text) {
  return String(text ?? '').replace(/\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}/g, '$1');
}

function onThisMachine(url) {
  try {
    return LOOPBACK.has(new URL(withDefaults(url)).hostname);
  } catch {
    return false;
  }
}

/**
 * Points the flows at the simulator started now (its ports change when the last ones are taken): every lh-server
 * whose URLs are on this machine, and the SIM_URL environment variable of tabs (example 08). Returns whether anything
 * changed. A server at another host (a real instrument the user added) is left alone.
 */
function aimAtSimulator(nodes, sim) {
  let changed = false;
  const set = (node, key, value) => {
    if (node[key] === value) return;
    node[key] = value;
    changed = true;
  };
  for (const n of nodes) {
    if (n.type === 'lh-server' && (onThisMachine(n.baseUrl) || onThisMachine(n.instrumentUrl))) {
      set(n, 'baseUrl', sim.baseUrl);
      set(n, 'instrumentUrl', sim.instrumentUrl);
    }
    if (n.type === 'tab' && Array.isArray(n.env)) {
      for (const v of n.env) {
        if (!v || v.name !== 'SIM_URL') continue;
        set(v, 'value', sim.controlUrl);
        set(v, 'type', 'str'); // the examples compute it (jsonata) from LH_SIM_HOST and LH_SIM_PORT
      }
    }
  }
  return changed;
}

/** Updates the saved flows (flows.json, before Node-RED reads it) to the simulator of this start. */
function updateSavedFlows(file, sim) {
  let nodes;
  try {
    nodes = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    console.error(`Could not read ${file} to point it at the simulator: ${err.message}`);
    return;
  }
  if (!Array.isArray(nodes) || !aimAtSimulator(nodes, sim)) return;
  fs.writeFileSync(file, `${JSON.stringify(nodes, null, 4)}\n`);
  console.log(`Flows pointed at the simulator of this start (${sim.baseUrl}, ${sim.instrumentUrl})`);
}

/**
 * All example flows as one deployable flow: one shared lh-server aimed at the simulator, credentials attached. Those of
 * examples-extra/ too (e-mail, dashboard): this checkout's Node-RED has their packages (devDependencies).
 */
function demoFlow(sim) {
  const seen = new Set();
  const flow = [];
  const files = ['examples', 'examples-extra']
    .flatMap((dir) =>
      fs
        .readdirSync(path.join(root, dir))
        .filter((f) => f.endsWith('.json'))
        .map((f) => ({ f, full: path.join(root, dir, f) })),
    )
    .sort((a, b) => (a.f < b.f ? -1 : a.f > b.f ? 1 : 0));
  for (const { full } of files) {
    for (const n of JSON.parse(fs.readFileSync(full, 'utf8'))) {
      if (seen.has(n.id)) continue;
      seen.add(n.id);
      if (n.type === 'lh-server') n.credentials = { username: 'admin', password: 'labwire' };
      flow.push(n);
    }
  }
  aimAtSimulator(flow, sim);
  return flow;
}

async function main() {
  const { Simulator } = require(path.join(root, 'nodes', 'simulator'));
  const sim = new Simulator({ host, port: await freePort(8090), httpsPort: await freePort(8443) });
  await sim.start();
  console.log(`Simulator: A ${sim.baseUrl}  B ${sim.instrumentUrl}  control ${sim.controlUrl}/sim/state  (user admin / labwire)`);

  fs.mkdirSync(userDir, { recursive: true });
  // PORT: the editor's port (default 1880, the next free one when taken; 0 for any free port).
  const uiPort = await freePort(process.env.PORT ? Number(process.env.PORT) : 1880);
  fs.writeFileSync(
    path.join(userDir, 'settings.js'),
    `module.exports = ${JSON.stringify(
      {
        uiHost: host,
        uiPort,
        userDir,
        flowFile: 'flows.json',
        nodesDir: [root],
        editorTheme: { tours: false, projects: { enabled: false } },
        // no "Enable update notifications?" prompt in the sandbox (it would also make the editor ask the internet)
        telemetry: { enabled: false, updateNotification: false },
        logging: { console: { level: 'info', metrics: false, audit: false } },
      },
      null,
      2,
    )};\n`,
  );
  // example 06 starts runs only for requests carrying this token (X-LIMS-Token); a new one per start unless given
  const limsToken = process.env.LIMS_TOKEN || randomBytes(12).toString('hex');
  const flowsFile = path.join(userDir, 'flows.json');
  const firstRun = !fs.existsSync(flowsFile);
  // every start, not only the first: this simulator may listen on other ports than the last one did
  if (!firstRun) updateSavedFlows(flowsFile, sim);
  const red = spawn(process.execPath, [require.resolve('node-red/red.js'), '--settings', path.join(userDir, 'settings.js')], {
    stdio: ['ignore', 'inherit', 'inherit'],
    // the address in answer links (lh-answer-page): this Node-RED, unless the user says otherwise
    env: {
      ...process.env,
      LH_PUBLIC_URL: process.env.LH_PUBLIC_URL || `http://${host}:${uiPort}`,
      LIMS_TOKEN: limsToken,
      // what the examples' lh-server URLs and example 08's SIM_URL read (${LH_SIM_PORT:-8090}): this simulator
      LH_SIM_HOST: host,
      LH_SIM_PORT: String(new URL(sim.baseUrl).port),
      LH_SIM_HTTPS_PORT: String(new URL(sim.instrumentUrl).port),
    },
  });
  const editor = `http://${host}:${uiPort}/`;
  let stopping = false;
  async function stop(code) {
    if (stopping) return;
    stopping = true;
    if (red.exitCode === null) {
      red.kill('SIGINT');
      await new Promise((r) => red.once('exit', r));
    }
    await sim.stop();
    process.exit(code);
  }
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  red.on('exit', (code) => stop(code ?? 0));

  await waitForEditor(editor, red);
  if (firstRun) {
    const res = await request('POST', `${editor}flows`, demoFlow(sim));
    if (res.status !== 204 && res.status !== 200) console.error(`Deploying the demo flow failed: ${res.status} ${res.text}`);
  }
  console.log(
    `Example 06 starts runs for POST ${editor}lims/run with the header X-LIMS-Token: ${limsToken} (LIMS_TOKEN sets it)`,
  );
  console.log(`\nNode-RED editor: ${editor}\n(Ctrl-C stops Node-RED and the simulator)\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
