/**
 * A Node-RED process for kill.test.ts: the package loaded from nodes/ (as Node-RED loads it), settings.js `lhAudit`
 * pointing at the test's folder, and eight lh-clear-errors nodes each wired to itself, so that instrument-changing
 * requests never stop. Prints `durable <seq> <hash>` for every audit record once it is on disk.
 */
import fs from 'fs';
import http from 'http';
import path from 'path';

const [dir, baseUrl, userDir] = process.argv.slice(2);
const root = path.resolve(__dirname, '..', '..');
// the same module Node-RED loads through lh-server (nodes/nodes/lh-server -> nodes/audit)
const audit = require(path.join(root, 'nodes', 'audit')) as typeof import('../../src/audit');
audit.onAuditRecord((r) => process.stdout.write(`durable ${r.seq} ${r.hash}\n`));

const flow: Record<string, unknown>[] = [
  { id: 'tab', type: 'tab', label: 'kill' },
  { id: 'server', type: 'lh-server', name: 'sim', baseUrl, instrumentUrl: '', clientKey: 'nodered', timeout: 10000 },
];
for (let i = 0; i < 8; i++) {
  flow.push({
    id: `go${i}`,
    type: 'inject',
    z: 'tab',
    once: true,
    onceDelay: 0.1,
    repeat: '',
    props: [{ p: 'payload' }],
    payload: '',
    payloadType: 'date',
    wires: [[`clear${i}`]],
  });
  flow.push({ id: `clear${i}`, type: 'lh-clear-errors', z: 'tab', server: 'server', version: 1, wires: [[`clear${i}`]] });
}
fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(flow));
fs.writeFileSync(
  path.join(userDir, 'flows_cred.json'),
  JSON.stringify({ server: { username: 'admin', password: process.env.LH_KILL_PASSWORD } }),
);

const RED = require('node-red') as {
  init(server: http.Server, settings: Record<string, unknown>): void;
  start(): Promise<void>;
  httpAdmin: http.RequestListener;
};
const server = http.createServer((req, res) => RED.httpAdmin(req, res));
RED.init(server, {
  userDir,
  flowFile: 'flows.json',
  nodesDir: [root],
  credentialSecret: false,
  httpAdminRoot: false,
  logging: { console: { level: 'error', metrics: false, audit: false } },
  editorTheme: { tours: false },
  lhAudit: { dir, key: 'kill-key', maxFileBytes: 256 * 1024 },
});
void RED.start();
