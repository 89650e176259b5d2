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

/** The JSON type of a step variant's own field, as public clients show it. */
export type StepFieldType = 'boolean' | 'number' | 'string' | 'array' | 'object' | readonly string[];

/**
 * Own fields of step variants that public client code shows (observed-instrument.md, spec-derived): the client refuses
 * a value of another type before sending, the simulator answers 400 naming the field. null is accepted for each (an
 * unset value on the wire). Every other field, and every field of the other variants, is kept exactly as given.
 */
export const STEP_VARIANT_FIELDS: Readonly<Partial<Record<StepType, Readonly<Record<string, StepFieldType>>>>> = {
  PauseStep: { duration: 'number', message: 'string', pauseForSetDuration: 'boolean' },
  HeatShakeStep: {
    platePosition: 'string',
    heat: 'boolean',
    shake: 'boolean',
    rpm: 'number',
    temperature: 'number',
    duration: 'number',
    heatStartOptions: 'string',
  },
  AddReagentStep: {
    destinations: 'array',
    multiDispense: 'boolean',
    multiDispenseSettings: 'object',
    liquidLabwareGroupId: 'number',
  },
  TransferSamplesStep: {
    sources: 'array',
    destinations: 'array',
    aspirateSettings: 'object',
    dispenseSettings: 'object',
    channelSelection: ['OneChannel', 'TwoChannel', 'EightChannel'],
    tipReuseOption: 'string',
  },
};

/** Why `value` does not fit `type` (a field of STEP_VARIANT_FIELDS), or undefined when it does. null always fits. */
export function stepFieldProblem(value: unknown, type: StepFieldType): string | undefined {
  if (value === null) return undefined;
  if (typeof type !== 'string') {
    return typeof value === 'string' && type.includes(value) ? undefined : `must be one of ${type.join(', ')}`;
  }
  switch (type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
    case 'array':
      return Array.isArray(value) ? undefined : 'must be an array';
    case 'object':
      return typeof value === 'object' && !Array.isArray(value) ? undefined : 'must be an object';
    default:
      return typeof value === type ? undefined : `must be a ${type}`;
  }
}
