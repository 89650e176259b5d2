#!/usr/bin/env node
/** lh-simulator: runs the instrument simulator from the command line until SIGINT/SIGTERM. */
import { parseArgs } from 'util';

import { certPath, Simulator } from './simulator';
import type { SimUser } from './types';

const HELP = `Usage: lh-simulator [options]

Runs a simulated liquid-handling workstation: the preparation service (interface A, HTTP),
the instrument control interface (interface B, HTTPS) and a /sim control API.

Options:
  --host <address>          address to bind (default 127.0.0.1)
  --port <n>                HTTP port of interface A and /sim (default 8090; 0 = any free port)
  --https-port <n>          HTTPS port of interface B (default 8443; 0 = any free port)
  --prefix <path>           path prefix of interface A, e.g. /NimbusLite (default none)
  --user <name:password>    a user that may log in (repeatable; default admin:labwire)
  --token-lifetime <s>      token lifetime in seconds (default 300)
  --strict                  spec-only: A bodies only with the exact media type of interfaces.md,
                            credentials on renew-token, a token on every read, step types as listed,
                            PascalCase event frames, the simulation speed as a number
                            (default: what real instruments accept and send, as hardware-tested clients
                            observed it: any JSON media type, renew-token with {}, status reads without
                            a token, step types without "Step", {code, description, data} frames)
  --lenient-media-types     the default; kept for older scripts
  --no-sockets              serve no websockets (instinctevents, instincterrors): an instrument without
                            live events, so clients fall back to polling
  --simulation-speed <x>    protocol runs: simulated seconds per real second (default 1)
  --run-states-as-names     serve protocolRunState as a name ("Running") instead of a number (4)
  --help                    show this text
`;

function port(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${flag} must be a port number from 0 to 65535`);
  return n;
}

function user(spec: string): SimUser {
  const colon = spec.indexOf(':');
  if (colon <= 0 || colon === spec.length - 1) throw new Error(`--user takes name:password, got '${spec}'`);
  return { username: spec.slice(0, colon), password: spec.slice(colon + 1) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'https-port': { type: 'string' },
      prefix: { type: 'string' },
      user: { type: 'string', multiple: true },
      'token-lifetime': { type: 'string' },
      strict: { type: 'boolean' },
      'lenient-media-types': { type: 'boolean' },
      'no-sockets': { type: 'boolean' },
      'simulation-speed': { type: 'string' },
      'run-states-as-names': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  let tokenLifetimeSeconds: number | undefined;
  if (values['token-lifetime'] !== undefined) {
    tokenLifetimeSeconds = Number(values['token-lifetime']);
    if (!Number.isFinite(tokenLifetimeSeconds) || tokenLifetimeSeconds <= 0)
      throw new Error('--token-lifetime must be a number of seconds > 0');
  }
  let simulationSpeed: number | undefined;
  if (values['simulation-speed'] !== undefined) {
    simulationSpeed = Number(values['simulation-speed']);
    if (!Number.isFinite(simulationSpeed) || simulationSpeed <= 0 || simulationSpeed > 100_000)
      throw new Error('--simulation-speed must be a number > 0 and at most 100000');
  }
  const users = (values.user ?? []).map(user);
  const sim = new Simulator({
    host: values.host,
    port: port(values.port, 8090, '--port'),
    httpsPort: port(values['https-port'], 8443, '--https-port'),
    prefix: values.prefix,
    users: users.length > 0 ? users : undefined,
    tokenLifetimeSeconds,
    strict: values.strict ?? false,
    sockets: !values['no-sockets'],
    simulationSpeed,
    runStatesAsNames: values['run-states-as-names'] ?? false,
  });
  await sim.start();
  const names = users.length > 0 ? users.map((u) => u.username).join(', ') : 'admin (password labwire)';
  process.stdout.write(
    [
      'Liquid-handler simulator running',
      `  interface A (preparation service): ${sim.baseUrl}`,
      `  interface B (instrument control):  ${sim.instrumentUrl}`,
      `  control API:                       ${sim.controlUrl}/sim/state`,
      `  live events (websockets):          ${values['no-sockets'] ? 'off' : `${sim.baseUrl.replace(/^http/, 'ws')}/instinctevents, /instincterrors`}`,
      `  CA certificate for interface B:    ${certPath('ca.pem')}`,
      `  users: ${names}`,
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: stopping the simulator\n`);
    sim.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`lh-simulator: ${err instanceof Error ? err.message : String(err)}\n\n${HELP}`);
  process.exit(1);
});
