/**
 * A real MQTT broker on loopback for the state-stream tests: Debian's mosquitto when it is installed (CI installs
 * it), else aedes in this process (an npm package). LH_MQTT_BROKER=aedes picks aedes where both are present.
 * LH_MQTT_CONNECT_DELAY_MS=1500 puts a proxy before it that holds every new connection that long before it reaches the
 * broker (a busy CI machine, a remote broker): a test that sends through a connection it does not know is up fails.
 */
import { ChildProcess, execFileSync, spawn } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';

import { freePort } from './free-port';
import { until } from './until';

export interface TestBroker {
  kind: 'mosquitto' | 'aedes';
  port: number;
  url: string;
  stop(): Promise<void>;
}

function hasMosquitto(): string | undefined {
  for (const candidate of ['/usr/sbin/mosquitto', '/usr/bin/mosquitto']) if (fs.existsSync(candidate)) return candidate;
  try {
    return execFileSync('sh', ['-c', 'command -v mosquitto'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function startMosquitto(bin: string): Promise<TestBroker> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-mosquitto-'));
  const conf = path.join(dir, 'mosquitto.conf');
  fs.writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  const child: ChildProcess = spawn(bin, ['-c', conf], { stdio: 'ignore' });
  await until(() => accepts(port), `mosquitto on port ${port}`, 10_000);
  return {
    kind: 'mosquitto',
    port,
    url: `mqtt://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => {
          fs.rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

interface AedesBroker {
  handle: (socket: net.Socket) => void;
  close(cb: () => void): void;
}

async function startAedes(): Promise<TestBroker> {
  // aedes is an ES module; Node 20.19+ loads it with require
  const { Aedes } = require('aedes') as { Aedes: { createBroker(): Promise<AedesBroker> } };
  const broker = await Aedes.createBroker();
  const server = net.createServer((socket) => broker.handle(socket));
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    kind: 'aedes',
    port,
    url: `mqtt://127.0.0.1:${port}`,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(resolve));
    },
  };
}

/** `broker` behind a proxy that connects each client to it only `delayMs` after the client connected. */
export async function delayedConnections(broker: TestBroker, delayMs: number): Promise<TestBroker> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    client.pause();
    const timer = setTimeout(() => {
      const upstream = net.connect(broker.port, '127.0.0.1');
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.resume();
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    }, delayMs);
    client.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    kind: broker.kind,
    port,
    url: `mqtt://127.0.0.1:${port}`,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await broker.stop();
    },
  };
}

export async function startBroker(): Promise<TestBroker> {
  const mosquitto = process.env.LH_MQTT_BROKER === 'aedes' ? undefined : hasMosquitto();
  const broker = mosquitto ? await startMosquitto(mosquitto) : await startAedes();
  const delayMs = Number(process.env.LH_MQTT_CONNECT_DELAY_MS ?? 0);
  return delayMs > 0 ? delayedConnections(broker, delayMs) : broker;
}

/** The core mqtt-broker config node for `broker` and an mqtt out node (`out`) that publishes msg.topic as the msg says. */
export function coreMqttOut(broker: TestBroker): Record<string, unknown>[] {
  return [
    {
      id: 'broker',
      type: 'mqtt-broker',
      broker: '127.0.0.1',
      port: String(broker.port),
      protocolVersion: '4',
      autoConnect: true,
    },
    { id: 'out', type: 'mqtt out', broker: 'broker', topic: '', qos: '', retain: '' },
  ];
}

/**
 * Waits until coreMqttOut()'s broker config node (`broker`, as the runtime gives it) has connected: the core mqtt out
 * node drops what it is given before, so a test sends what it checks at the broker only after this.
 */
export async function mqttOutConnected(broker: unknown, timeoutMs = 15_000): Promise<void> {
  await until(() => (broker as { connected?: boolean }).connected === true, 'the mqtt out node connected', timeoutMs);
}
