import { ClientOptions, LiquidHandlerClient } from '../../src/client';
import { Simulator, SimulatorOptions } from '../../src/simulator';
import { USER } from './runtime';
import { until } from './until';

export interface ClientSuite {
  /** The suite's simulator (started in before(), reset after each test, stopped in after()). */
  readonly sim: Simulator;
  /** A client of the simulator trusting its CA and logging in as the default user; closed after the test. */
  make(overrides?: Partial<ClientOptions>): LiquidHandlerClient;
  /** The same client, not tracked: the test closes it itself. */
  unmanaged(overrides?: Partial<ClientOptions>): LiquidHandlerClient;
}

/**
 * Registers the mocha hooks of a client test file: one simulator (strict, spec-only media types, unless the options
 * say otherwise: the client's contract tests), clients closed and state reset after each test.
 */
export function useClients(simOptions: SimulatorOptions = {}, defaults: Partial<ClientOptions> = {}): ClientSuite {
  const sim = new Simulator({ strict: true, ...simOptions });
  const open: LiquidHandlerClient[] = [];
  const unmanaged = (overrides: Partial<ClientOptions> = {}): LiquidHandlerClient =>
    new LiquidHandlerClient({
      baseUrl: sim.baseUrl,
      instrumentUrl: sim.instrumentUrl,
      tls: { ca: sim.ca },
      credentials: { ...USER },
      ...defaults,
      ...overrides,
    });

  before(async function () {
    await sim.start();
  });
  after(async function () {
    await sim.stop();
  });
  afterEach(async function () {
    await Promise.all(open.splice(0).map((c) => c.close()));
    sim.reset();
  });

  return {
    sim,
    unmanaged,
    make(overrides) {
      const c = unmanaged(overrides);
      open.push(c);
      return c;
    },
  };
}

/**
 * Drives a run of protocol 1 on the simulator as an operator does: create, load-complete once it is Loading, pause
 * (until it is Paused), resume, abort. Resolves once abort was sent.
 */
export async function pauseResumeAbort(c: LiquidHandlerClient): Promise<void> {
  await c.runs.createRun({ protocolId: 1 });
  await until(async () => (await c.runs.status()).protocolRunState === 'Loading', 'Loading');
  await c.runs.loadComplete({ protocolId: 1 });
  await c.runs.pause();
  await until(async () => (await c.runs.status()).protocolRunState === 'Paused', 'Paused');
  await c.runs.resume();
  await c.runs.abort();
}
