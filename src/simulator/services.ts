/** The stateful parts of the simulator that the route tables work on. */
import type { AuthService } from './auth';
import type { InstrumentErrorBook } from './instrument-errors';
import type { RunMachine } from './run-machine';
import type { RuntimeErrorBook } from './runtime-errors';
import type { ServiceRoutineBook } from './settings';
import type { StepStore } from './steps';
import type { PolicySettings, SoftwareSettings } from './types';

export interface Services {
  auth: AuthService;
  steps: StepStore;
  runtimeErrors: RuntimeErrorBook;
  routines: ServiceRoutineBook;
  instrument: InstrumentErrorBook;
  runs: RunMachine;
  settings: { software: SoftwareSettings; policy: PolicySettings };
}
