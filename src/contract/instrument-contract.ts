/**
 * Facts fixed by interfaces.md that both sides of the wire share: the client validates against them and the
 * simulator enforces them. Only what the specification states belongs here.
 */

/** 2.1: the stepType discriminator's allowed values. */
export const STEP_TYPES = [
  'AddReagentStep',
  'ReplicateSamplesStep',
  'TransferSamplesStep',
  'HeatShakeStep',
  'PauseStep',
  'HitPickingStep',
  'SerialDilutionStep',
  'RtsaStep',
  'BarcodeStep',
  'TransportStep',
  'NormalizationStep',
  'ReagentFromFileStep',
  'LightingStep',
  'HeatCoolStep',
  'LidStep',
  'HepaStep',
] as const;

export type StepType = (typeof STEP_TYPES)[number];

/** 8: the error-handler client key of B: letters and digits only, no spaces. */
export const CLIENT_KEY_PATTERN = /^[A-Za-z0-9]+$/;

/** 2.4 */
export interface ClearResult {
  numberOfErrorsCleared: number;
  numberOfErrorsNotCleared: number;
}

/** 2.5 */
export interface SoftwareSettings {
  hideKeyboard: boolean;
  generateRunReport: boolean;
  allowRedWarningOverride: boolean;
  defaultAmbientTemperature: number;
}

/** 2.5: every software setting and its type, the one list the client, the simulator and lh-settings use. */
export const SOFTWARE_SETTING_FIELDS: Readonly<Record<keyof SoftwareSettings, 'boolean' | 'int32'>> = {
  hideKeyboard: 'boolean',
  generateRunReport: 'boolean',
  allowRedWarningOverride: 'boolean',
  defaultAmbientTemperature: 'int32',
};

/** 2.6 (units not given by the specification). */
export interface PolicySettings {
  maximumLoginAttempts: number;
  lockTimeout: number;
  passwordExpires: number;
  passwordExpiresNotification: number;
  minimumPasswordLength: number;
  inactiveLogout: number;
  logoutCountdown: number;
  enableUserManagement: boolean;
}

/** `protocolRunState` 0..9 of GET protocol-run (observed on real instruments; some serve the name instead). */
export const RUN_STATE_NAMES = [
  'Idle',
  'Scheduling',
  'Scheduled',
  'Loading',
  'Running',
  'Pausing',
  'Paused',
  'Aborting',
  'Reloading',
  'ErrorHandling',
] as const;
export type RunStateName = (typeof RUN_STATE_NAMES)[number];
