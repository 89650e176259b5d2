#!/usr/bin/env node
'use strict';
// `npm run start:ha`: watch a failover. One simulator, one redis-server (its own, on a free port, temp dir) and two
// Node-REDs (127.0.0.1 only) with identical flows: an lh-coordination node, an lh-server using it, an error poll and
// a debug node. Open both editors: one poll shows the error count, the other "standby: … holds it". Inject errors
// with the printed curl line, kill the holder (its pid is printed) with `kill -9`, and watch the other take over
// within two lease times (5 s). Ctrl-C stops everything.
const fs = require('fs');
const os = require('os');
const net = require('net');
const path = require('path');
const { spawn, execFileSync } = require('child_process');

const root = path.resolve(__dirname, '..');
const host = '127.0.0.1';
const children = [];
let work = '';

function freePort() {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.listen(0, host, () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function redisBinary() {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

function waitFor(child, pattern, what) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk) => {
      seen += chunk.toString();
      if (pattern.test(seen)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}):\n${seen}`)));
  });
}

function start(command, args, what, pattern, env) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  children.push(child);
  return waitFor(child, pattern, what).then(() => child);
}

function flows(redisUrl, baseUrl) {
  return [
    { id: 'tab', type: 'tab', label: 'Several Node-REDs' },
    { id: 'coord', type: 'lh-coordination', name: 'lab redis', url: redisUrl, prefix: 'labwire-demo', leaseSeconds: 5 },
    { id: 'server', type: 'lh-server', name: 'simulator', baseUrl, coordination: 'coord' },
    {
      id: 'poll',
      type: 'lh-error-poll',
      z: 'tab',
      name: 'errors',
      server: 'server',
      source: 'A',
      interval: 1,
      x: 140,
      y: 80,
      wires: [['raised'], ['resolved'], []],
    },
    { id: 'raised', type: 'debug', z: 'tab', name: 'raised', active: true, complete: 'notification', x: 360, y: 60, wires: [] },
    { id: 'resolved', type: 'debug', z: 'tab', name: 'resolved', active: true, complete: 'topic', x: 360, y: 100, wires: [] },
  ];
}

async function main() {
  const binary = redisBinary();
  if (!binary) {
    console.error('redis-server is not installed: sudo apt-get install redis-server (then run npm run start:ha again)');
    process.exit(1);
  }
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-start-ha-'));
  const redisPort = await freePort();
  await start(
    binary,
    ['--port', String(redisPort), '--bind', host, '--dir', work, '--save', ''],
    'redis-server',
    /Ready to accept/,
  );
  const simPort = await freePort();
  const simHttps = await freePort();
  await start(
    process.execPath,
    [path.join(root, 'nodes', 'simulator', 'cli.js'), '--port', String(simPort), '--https-port', String(simHttps)],
    'lh-simulator',
    /listening|A:|http:\/\//i,
  );
  const baseUrl = `http://${host}:${simPort}`;
  const redisUrl = `redis://${host}:${redisPort}`;
  const red = path.join(path.dirname(require.resolve('node-red/package.json')), 'red.js');
  for (const name of ['replica-1', 'replica-2']) {
    const userDir = path.join(work, name);
    fs.mkdirSync(userDir);
    const port = await freePort();
    fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(flows(redisUrl, baseUrl), null, 2));
    fs.writeFileSync(
      path.join(userDir, 'flows_cred.json'),
      JSON.stringify({ server: { username: 'admin', password: 'labwire' } }),
    );
    const settings = {
      uiHost: host,
      uiPort: port,
      userDir,
      flowFile: 'flows.json',
      nodesDir: [root],
      credentialSecret: false,
      editorTheme: { tours: false },
    };
    fs.writeFileSync(path.join(userDir, 'settings.js'), `module.exports = ${JSON.stringify(settings, null, 2)};\n`);
    const child = await start(
      process.execPath,
      [red, '--settings', path.join(userDir, 'settings.js'), '--userDir', userDir],
      name,
      /^(?=[\s\S]*Started flows)(?=[\s\S]*Server now running)/, // both: red.js listens only after the flows start
    );
    console.log(`${name}: http://${host}:${port}/  (pid ${child.pid}: kill -9 ${child.pid} to see the other take over)`);
  }
  console.log(
    `\nRedis ${redisUrl}, simulator ${baseUrl}. Raise an error:\n  curl -s -X POST ${baseUrl}/sim/errors -H 'content-type: application/json' -d '{}'`,
  );
  console.log('Each error shows once in one of the two debug sidebars. Ctrl-C stops everything.');
}

function stopAll() {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  if (work) fs.rmSync(work, { recursive: true, force: true });
  work = '';
}
process.on('SIGINT', () => {
  stopAll();
  process.exit(0);
});
process.on('exit', stopAll);
main().catch((err) => {
  console.error(err.message);
  stopAll();
  process.exit(1);
});
