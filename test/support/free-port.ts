/**
 * A free TCP port on 127.0.0.1 for a server a test starts, stops and starts again on the same port (redis-server, a
 * broker, Node-RED): picked at random below the kernel's ephemeral range, as the simulator does, because outgoing
 * connections of any process are given ports from that range and one may hold the port while the server is down.
 */
import * as net from 'node:net';

import { ephemeralLow, OWN_RANGE_LOW as LOW } from '../../src/simulator/servers';

function bindable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(undefined));
    probe.listen(port, '127.0.0.1', () => {
      const bound = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(bound));
    });
  });
}

/**
 * `bus`: the port + `bus` must be free too and below the range as well (a Redis Cluster node's bus port is its port
 * + 10000).
 */
export async function freePort(bus = 0): Promise<number> {
  const high = ephemeralLow() - 1 - bus;
  for (let i = 0; high > LOW && i < 40; i++) {
    const port = await bindable(LOW + Math.floor(Math.random() * (high - LOW + 1)));
    if (port !== undefined && (bus === 0 || (await bindable(port + bus)) !== undefined)) return port;
  }
  const any = await bindable(0);
  if (any === undefined) throw new Error('no free port on 127.0.0.1');
  return any;
}
