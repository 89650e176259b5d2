import http from 'http';
import { AddressInfo } from 'net';
import { Transport } from './src/client/transport-old';

async function main() {
  let n = 0; let conns = 0;
  const server = http.createServer((req, res) => { n++; res.end('{}'); });
  server.on('connection', () => conns++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = new Transport({ baseUrl: url, maxSockets: 1, timeoutMs: 5000, retries: 0 });
  const a = t.request({ api: 'A', method: 'POST', path: '/x', operation: 'a', idempotent: false, body: { x: 1 } }).catch((e) => e);
  t.close();
  const ra = await a;
  console.log('ended', ra.message);
  await new Promise((r) => setTimeout(r, 300));
  console.log('requests', n, 'connections made', conns, 'open', await new Promise((r) => server.getConnections((e, c) => r(c))));
  console.log(process.getActiveResourcesInfo());
  server.closeAllConnections(); server.close();
}
main();
