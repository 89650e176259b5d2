/**
 * Software settings, policy settings and service routines (4.4).
 *
 * POST software-settings replaces all four fields: each is required and type-checked (400 naming the fields).
 * PUT service-routines updates one routine named by its id (404 when unknown); every field is validated.
 */
import { SOFTWARE_SETTING_FIELDS } from '../contract/instrument-contract';
import { field, FieldErrors, isInt32, isIsoDateTime, requireBoolean, requireInt32, requireObject } from './json-fields';
import { notFound } from './problem';
import type { PolicySettings, ServiceRoutine, SoftwareSettings } from './types';

export const DEFAULT_POLICY: PolicySettings = {
  maximumLoginAttempts: 5,
  lockTimeout: 15,
  passwordExpires: 90,
  passwordExpiresNotification: 14,
  minimumPasswordLength: 6,
  inactiveLogout: 60,
  logoutCountdown: 10,
  enableUserManagement: true,
};

export function seedSoftwareSettings(): SoftwareSettings {
  return { hideKeyboard: false, generateRunReport: true, allowRedWarningOverride: false, defaultAmbientTemperature: 22 };
}

export function seedServiceRoutines(): ServiceRoutine[] {
  return [
    { id: 1, name: 'Daily maintenance', isRecommended: true, lastRun: '2024-05-02T07:30:00Z' },
    { id: 2, name: 'Weekly maintenance', isRecommended: false, lastRun: '2024-04-29T08:00:00Z' },
    { id: 3, name: 'Channel leak check', isRecommended: true, lastRun: null },
    { id: 4, name: 'Camera calibration check', isRecommended: false, lastRun: null },
  ];
}

/** POST software-settings body → the new settings, or a 400 naming every bad field. */
export function parseSoftwareSettings(body: unknown): SoftwareSettings {
  const obj = requireObject(body);
  const errors = new FieldErrors();
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(SOFTWARE_SETTING_FIELDS)) {
    out[name] = errors.check(() => (type === 'boolean' ? requireBoolean(obj, name) : requireInt32(obj, name)));
  }
  errors.throwIfAny();
  return out as unknown as SoftwareSettings;
}

export class ServiceRoutineBook {
  routines: ServiceRoutine[] = [];

  get(id: number): ServiceRoutine {
    const r = this.routines.find((x) => x.id === id);
    if (!r) throw notFound(`Service routine ${id} was not found.`);
    return { ...r };
  }

  list(): ServiceRoutine[] {
    return this.routines.map((r) => ({ ...r }));
  }

  /** PUT service-routines */
  update(body: unknown): void {
    const obj = requireObject(body);
    const errors = new FieldErrors();
    const id = errors.check(() => requireInt32(obj, 'id'));
    const name = field(obj, 'name');
    if (name !== undefined && name !== null && typeof name !== 'string')
      errors.add('name', 'The name field must be a string or null.');
    const isRecommended = field(obj, 'isRecommended');
    if (isRecommended !== undefined && typeof isRecommended !== 'boolean')
      errors.add('isRecommended', 'The isRecommended field must be a boolean.');
    const lastRun = field(obj, 'lastRun');
    if (lastRun !== undefined && lastRun !== null && (typeof lastRun !== 'string' || !isIsoDateTime(lastRun))) {
      errors.add('lastRun', 'The lastRun field must be an ISO 8601 date-time or null.');
    }
    errors.throwIfAny();
    const routine = this.routines.find((x) => x.id === id);
    if (!routine || !isInt32(id)) throw notFound(`Service routine ${String(id)} was not found.`);
    if (name !== undefined) routine.name = name as string | null;
    if (isRecommended !== undefined) routine.isRecommended = isRecommended as boolean;
    if (lastRun !== undefined) routine.lastRun = lastRun as string | null;
  }
}
