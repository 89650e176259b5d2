import { withActor } from '../../audit';
import {
  type HeldApplyLock,
  type PrepApi,
  type ProtocolApplyLocks,
  type SoftwareSettings,
  softwareSettings,
  validate as v,
  validate,
  validationError,
} from '../../client';
import { homeOf, slot } from '../../instrument';
import { oneAtATime } from '../shared/one-at-a-time';

export const SETTINGS_OPERATIONS = ['get-software-settings', 'set-software-settings', 'get-policy-settings'] as const;
export type SettingsOperation = (typeof SETTINGS_OPERATIONS)[number];
export const SET_MODES = ['merge', 'replace'] as const;
export type SetMode = (typeof SET_MODES)[number];

const SOFTWARE_FIELDS = Object.keys(validate.SOFTWARE_SETTING_FIELDS) as (keyof SoftwareSettings)[];

export function settingsOperation(value: unknown): SettingsOperation {
  return v.oneOf(value, SETTINGS_OPERATIONS, 'operation', 'lh-settings');
}

export function setMode(value: unknown): SetMode {
  if (value === undefined || value === null || value === '') return 'merge';
  return v.oneOf(value, SET_MODES, 'mode', 'set-software-settings');
}

/** Only the four settings of the interface, so that a merge never sends a field the instrument did not define. */
function known(current: unknown): Partial<SoftwareSettings> {
  const out: Record<string, unknown> = {};
  if (!v.isPlainObject(current)) return out;
  for (const field of SOFTWARE_FIELDS) if (current[field] !== undefined) out[field] = current[field];
  return out as Partial<SoftwareSettings>;
}

/** The settings a set's msg.payload names, checked (throws naming the field and the rule). */
function settingsToSet(payload: unknown, mode: SetMode): Partial<SoftwareSettings> {
  const op = 'set-software-settings';
  const given = softwareSettings(payload, op, mode === 'replace');
  if (Object.keys(given).length === 0) {
    throw validationError(op, 'payload', `must name at least one software setting (${SOFTWARE_FIELDS.join(', ')})`);
  }
  return given;
}

/**
 * The sets of software settings under way in this process, per instrument (its home: every lh-server node of it).
 * Two merges at once both read the settings before either wrote, and the second wrote the first's setting back to
 * its old value: a set reported saved was undone, and the audit's old value of the second was not the old one.
 */
const SETTING_SETS = slot('software-setting-sets', () => new Map<string, Promise<unknown>>());

/**
 * Writes software settings and returns them as the instrument now has them. merge: `payload` may name some of the
 * settings, the others keep their current values (read, merge, write). replace: `payload` must name all of them.
 * One at a time per instrument (`instrument`: its URL): each reads, writes and reads back after the one before.
 * Everything is checked before the first request, and before it waits (a bad one refused at once, read as it came,
 * never after other merges).
 */
export async function setSoftwareSettings(
  instrument: string,
  prep: PrepApi,
  payload: unknown,
  mode: SetMode,
): Promise<SoftwareSettings> {
  const given = settingsToSet(payload, mode);
  const home = homeOf(instrument);
  return oneAtATime(home.slot(SETTING_SETS), 'software-settings', () => lockedAcrossNodeReds(home.applyLocks, prep, given, mode));
}

/**
 * With lh-coordination the set holds the settings' lock in Redis from its read to its write (apply-locks.ts): two
 * Node-REDs merging different settings at once both read before either wrote, and the second wrote the first's
 * setting back. A second set waits for the lock; Redis unreachable refuses the set before anything is written.
 */
async function lockedAcrossNodeReds(
  locks: ProtocolApplyLocks | undefined,
  prep: PrepApi,
  given: Partial<SoftwareSettings>,
  mode: SetMode,
): Promise<SoftwareSettings> {
  const lock = await locks?.takeSettings('set-software-settings');
  try {
    return await writeSettings(prep, given, mode, lock);
  } finally {
    await lock?.release();
  }
}

async function writeSettings(
  prep: PrepApi,
  given: Partial<SoftwareSettings>,
  mode: SetMode,
  lock: HeldApplyLock | undefined,
): Promise<SoftwareSettings> {
  const old = mode === 'replace' ? undefined : known(await prep.getSoftwareSettings());
  const next = old === undefined ? given : { ...old, ...given };
  await lock?.confirm(); // still this set's: else another Node-RED may have written since the read
  // the audit record shows old -> new where the node read the old value
  await withActor(old === undefined ? {} : { old }, () => prep.setSoftwareSettings(next));
  return prep.getSoftwareSettings();
}
