/** Building the simulator's stateful parts (Services), seeding them, and reading them for /sim/state. */
import { AuthService } from './auth';
import { InstrumentErrorBook } from './instrument-errors';
import { HttpProblem } from './problem';
import { type RunClock, type RunEventSink, RunMachine } from './run-machine';
import { RuntimeErrorBook } from './runtime-errors';
import type { Services } from './services';
import { seedServiceRoutines, seedSoftwareSettings, ServiceRoutineBook } from './settings';
import { StepStore } from './steps';
import type { PolicySettings, SimulatorOptions, SimulatorState, SimUser } from './types';

const DEFAULT_USERS: SimUser[] = [{ username: 'admin', password: 'labwire' }];

export interface ServiceWiring {
  lenient: boolean;
  policy: PolicySettings;
  clock: RunClock;
  runEvents: RunEventSink;
  /** the clock speed fault: how fast tokens age */
  clockSpeed(): number;
}

export function createServices(options: SimulatorOptions, w: ServiceWiring): Services {
  const settings = { software: seedSoftwareSettings(), policy: { ...w.policy } };
  const steps = new StepStore();
  steps.lenient = w.lenient;
  const runtimeErrors = new RuntimeErrorBook();
  const runs = new RunMachine({
    clock: w.clock,
    steps,
    errors: runtimeErrors,
    speed: options.simulationSpeed,
    statesAsNames: options.runStatesAsNames,
    events: w.runEvents,
  });
  runs.speedAsText = w.lenient;
  steps.editGuard = (protocolId) => refuseEditsWhileRunning(runs, protocolId);
  runtimeErrors.onHandled = (error) => runs.errorHandled(error);
  return {
    auth: new AuthService({
      users: (options.users && options.users.length > 0 ? options.users : DEFAULT_USERS).map((u) => ({ ...u })),
      tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? 300,
      tokenClaims: options.tokenClaims ?? 'iat',
      clockOffsetMs: options.clockOffsetMs ?? 0,
      instrumentTokens: [...(options.instrumentTokens ?? [])],
      policy: () => settings.policy,
      clockSpeed: w.clockSpeed,
      lenient: w.lenient,
    }),
    steps,
    runtimeErrors,
    runs,
    routines: new ServiceRoutineBook(),
    instrument: new InstrumentErrorBook(),
    settings,
  };
}

/** A protocol's steps are not changed while a run of it is in progress (409 naming the run). */
function refuseEditsWhileRunning(runs: RunMachine, protocolId: number): void {
  const status = runs.status();
  if (!status.isRunInProgress || status.protocolId !== protocolId) return;
  throw new HttpProblem(
    409,
    `Protocol ${protocolId} cannot be changed while a run of it is in progress (state ${String(status.protocolRunState)}).`,
  );
}

/** Back to the seed state (the demo protocols and service routines when `seed`), no errors, no run, no lockouts. */
export function seedServices(s: Services, seed: boolean, policy: PolicySettings): void {
  s.runs.reset(); // first: no run, so the seed protocols can be written
  s.steps.clear();
  s.routines.routines = [];
  if (seed) {
    s.steps.seed();
    s.routines.routines = seedServiceRoutines();
  }
  s.settings.software = seedSoftwareSettings();
  s.settings.policy = { ...policy };
  s.runtimeErrors.clear();
  s.instrument.clear();
  s.auth.reset();
}

export function stateOf(s: Services): SimulatorState {
  return {
    protocols: s.steps.protocols,
    pendingErrors: s.runtimeErrors.pending,
    history: s.runtimeErrors.history,
    instrumentErrors: s.instrument.errors,
    handlers: s.instrument.handlers,
    softwareSettings: s.settings.software,
    serviceRoutines: s.routines.routines,
    logins: s.auth.logins,
    renewals: s.auth.renewals,
    failedLogins: s.auth.failedLogins,
  };
}

/** The counts of GET /sim/state that come from the services. */
export function stateCounts(st: SimulatorState): Record<string, unknown> {
  let steps = 0;
  for (const p of st.protocols.values()) steps += p.steps.length;
  return {
    protocols: st.protocols.size,
    steps,
    pendingErrors: st.pendingErrors.length,
    historyErrors: st.history.length,
    instrumentErrors: st.instrumentErrors.length,
    unhandledInstrumentErrors: st.instrumentErrors.filter((e) => !e.handled).length,
    handlers: [...st.handlers],
    logins: st.logins,
    renewals: st.renewals,
    failedLogins: st.failedLogins,
  };
}
