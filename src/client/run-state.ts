/**
 * What a run status of the instrument says, tolerant of what real instruments send: `protocolRunState` as an
 * integer or as its name, dates of `0001-…` meaning "not set", PascalCase or camelCase property names.
 * Pure: no I/O, no timers.
 */

import { RUN_STATE_NAMES, RunStateName } from '../contract/instrument-contract';

export { RUN_STATE_NAMES, RunStateName };

/** The run status with the state as a name, its number, and dates as ISO text or null when not set. */
export interface RunStatus {
  /** the state's name (the instrument may send a number or a name) */
  protocolRunState: RunStateName;
  /** the state's number 0..9 */
  stateCode: number;
  isRunInProgress: boolean;
  isSimulation: boolean;
  protocolId: number | null;
  protocolName: string | null;
  currentStep: unknown;
  startTime: string | null;
  estimatedEndTime: string | null;
  /** every other field the instrument sent, as sent */
  [field: string]: unknown;
}

/** The value of `name` in `obj`, whatever the letter case of the key. */
export function fieldOf(obj: Record<string, unknown>, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(obj)) if (key.toLowerCase() === lower) return obj[key];
  return undefined;
}

/** A state given as 0..9 (number or digits) or as a name in any letter case; undefined when it is neither. */
export function runStateName(value: unknown): RunStateName | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? RUN_STATE_NAMES[value] : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return RUN_STATE_NAMES[Number(text)];
  const lower = text.replace(/[\s_-]/g, '').toLowerCase();
  return RUN_STATE_NAMES.find((n) => n.toLowerCase() === lower);
}

export function runStateCode(name: RunStateName): number {
  return RUN_STATE_NAMES.indexOf(name);
}

/** A date of the instrument as ISO text; null for "not set" (`0001-…`, empty, null) or text that is not a date. */
export function instrumentDate(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '' || value.startsWith('0001-')) return null;
  const ms = Date.parse(utcUnlessZoned(value.trim()));
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** An ISO date and time, its time after a `T` or a space (as some servers write it). */
const ISO_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})/;

/**
 * A date text as Date.parse reads the instrument's: dates without a zone are the instrument's UTC (the observed
 * "0001-01-01T00:00:00" has none either), with their time after a `T` or a space; any other text as it is.
 */
export function utcUnlessZoned(text: string): string {
  if (/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) || !ISO_DATE_TIME.test(text)) return text;
  return `${text.replace(ISO_DATE_TIME, '$1T$2')}Z`;
}

/** States in which a run exists (created and not yet back to Idle). */
export function isActiveState(state: RunStateName): boolean {
  return state !== 'Idle';
}

/** Reads a status body (GET protocol-run); throws a TypeError naming what is wrong when it is not one. */
export function parseRunStatus(body: unknown): RunStatus {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new TypeError('the run status is not a JSON object');
  }
  const obj = body as Record<string, unknown>;
  const rawState = fieldOf(obj, 'protocolRunState');
  const state = runStateName(rawState);
  if (state === undefined) {
    throw new TypeError(
      `protocolRunState ${JSON.stringify(rawState)} is not a run state (0..9 or ${RUN_STATE_NAMES.join(', ')})`,
    );
  }
  const rest: Record<string, unknown> = {};
  const known = new Set([
    'protocolrunstate',
    'isruninprogress',
    'issimulation',
    'protocolid',
    'protocolname',
    'currentstep',
    'starttime',
    'estimatedendtime',
  ]);
  for (const [k, v] of Object.entries(obj)) {
    if (!known.has(k.toLowerCase())) rest[k.length > 0 ? k[0].toLowerCase() + k.slice(1) : k] = v;
  }
  const inProgress = fieldOf(obj, 'isRunInProgress');
  const protocolId = fieldOf(obj, 'protocolId');
  const protocolName = fieldOf(obj, 'protocolName');
  return {
    ...rest,
    protocolRunState: state,
    stateCode: runStateCode(state),
    isRunInProgress: typeof inProgress === 'boolean' ? inProgress : isActiveState(state),
    isSimulation: fieldOf(obj, 'isSimulation') === true,
    protocolId: typeof protocolId === 'number' && protocolId > 0 ? protocolId : null,
    protocolName: typeof protocolName === 'string' && protocolName !== '' ? protocolName : null,
    currentStep: fieldOf(obj, 'currentStep') ?? null,
    startTime: instrumentDate(fieldOf(obj, 'startTime')),
    estimatedEndTime: instrumentDate(fieldOf(obj, 'estimatedEndTime')),
  };
}

/** Whether the instrument is busy with a run (a new run would be refused). */
export function isBusy(status: RunStatus): boolean {
  return status.isRunInProgress || isActiveState(status.protocolRunState);
}
