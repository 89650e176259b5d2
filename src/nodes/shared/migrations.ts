/**
 * Versioned config migrations: a node's saved configuration carries `version`; a configuration of an older
 * version (or none: a flow written by hand, by an API, or by 0.1) goes through each newer step of its type, which
 * renames changed properties and fills missing ones with the edit dialog's defaults. The tables below are the single
 * source of those defaults (test/unit/migrations.test.ts checks them against each node's html).
 */
import { NodeConfig } from './node-red';
import { DEFAULT_NOTIFICATION } from './poll-messages';

export interface MigrationStep {
  /** The version a configuration has after this step. */
  version: number;
  /** Old property name → new name; applied first (only when the new one is not already set). */
  renames?: Readonly<Record<string, string>>;
  /** Properties missing after the renames take these values (the dialog's defaults at this version). */
  defaults?: Readonly<Record<string, unknown>>;
  /** Reshapes properties whose form changed (applied to the copy after the renames, before the defaults). */
  transform?: (config: Record<string, unknown>) => void;
}

/**
 * lh-error-policy 1 → 2: a rule's single answer (`mode`, `answer`, `delay`) becomes a one-step recovery ladder
 * (`steps`), which behaves exactly as the rule did. Rules that already have steps are left as they are.
 */
export function rulesToLadders(config: Record<string, unknown>): void {
  if (!Array.isArray(config.rules)) return;
  config.rules = config.rules.map((rule: unknown) => {
    if (!rule || typeof rule !== 'object' || Array.isArray(rule)) return rule;
    const { mode, answer, delay, inputs, ...rest } = rule as Record<string, unknown>;
    if (Array.isArray(rest.steps)) return rest;
    const step: Record<string, unknown> = { mode: mode ?? 'manual', answer: answer ?? '', delay: delay ?? 120, inputs: inputs ?? '' };
    return { ...rest, steps: [step] };
  });
}

/**
 * Steps per node type, oldest first. Required settings without a meaningful default (the lh-server reference,
 * the instrument's baseUrl, a tls-config reference) are left out on purpose: a missing one must fail clearly.
 * A new node type adds one line: `'lh-foo': [{ version: 1, defaults: { name: '', operation: 'list' } }],`.
 */
export const MIGRATIONS: Readonly<Record<string, readonly MigrationStep[]>> = {
  'lh-server': [
    {
      version: 1,
      defaults: { name: '', instrumentUrl: '', allowInsecureInstrument: false, clientKey: '', simulatorCa: false, timeout: 10000 },
    },
    // 0.3: several Node-REDs through Redis (issue 19); empty is "this Node-RED only", as before
    { version: 2, defaults: { coordination: '' } },
  ],
  'lh-coordination': [{ version: 1, defaults: { name: '', url: 'redis://127.0.0.1:6379', mode: 'single', sentinelName: '', prefix: 'labwire', leaseSeconds: 5 } }],
  'lh-steps': [
    {
      version: 1,
      defaults: {
        name: '',
        operation: 'list',
        protocolId: '',
        protocolIdType: 'str',
        stepId: '',
        stepIdType: 'str',
        stepType: '',
        stepName: '',
        makeNameUnique: false,
        offset: '',
        offsetType: 'num',
        limit: '',
        limitType: 'num',
        allPages: false,
        includeFullStepData: 'msg',
        includeCustomLiquidSettings: 'msg',
      },
    },
  ],
  'lh-error-poll': [
    {
      version: 1,
      defaults: {
        name: '',
        source: 'A',
        interval: 5,
        minSeverity: '',
        offlineAfter: 3,
        template: DEFAULT_NOTIFICATION,
        persist: false,
        store: '',
      },
    },
    { version: 2, defaults: { listen: true } },
  ],
  'lh-answer-error': [
    { version: 1, defaults: { name: '', selectedResponse: '', selectedResponseType: 'str', errorId: '', errorIdType: 'str' } },
  ],
  'lh-clear-errors': [{ version: 1, defaults: { name: '' } }],
  'lh-audit': [{ version: 1, defaults: { name: '' } }],
  'lh-error-log': [
    {
      version: 1,
      defaults: {
        name: '',
        operation: 'list',
        offset: '',
        offsetType: 'num',
        limit: '50',
        limitType: 'num',
        allPages: false,
        maxItems: 1000,
        errorId: '',
        errorIdType: 'str',
      },
    },
  ],
  'lh-settings': [{ version: 1, defaults: { name: '', operation: 'get-software-settings', mode: 'merge' } }],
  'lh-service-routine': [
    { version: 1, defaults: { name: '', operation: 'list', routineId: '', routineIdType: 'num', recommendedOnly: false, markRunNow: false } },
  ],
  'lh-register-handler': [
    { version: 1, defaults: { name: '', operation: 'register', clientKey: '', clientKeyType: 'str', autoRegister: false } },
  ],
  'lh-submit-recovery': [
    {
      version: 1,
      defaults: { name: '', kind: 'recovery', selectedActionId: '', selectedActionIdType: 'num', uuid: '', uuidType: 'str' },
    },
  ],
  'lh-answer-page': [{ version: 1, defaults: { name: '', publicUrl: 'LH_PUBLIC_URL', publicUrlType: 'env', path: '/lh-answer', expiryHours: 24, linkText: 'Answer: {{answerUrl}}' } }],
  'lh-error-policy': [
    { version: 1, defaults: { name: '', rules: [{ source: 'any', minSeverity: '', pattern: '', code: '', mode: 'manual', answer: '', delay: 120 }], by: 'policy', store: '' } },
    {
      version: 2,
      transform: rulesToLadders,
      defaults: { rules: [{ source: 'any', minSeverity: '', pattern: '', code: '', steps: [{ mode: 'manual', answer: '', delay: 120, inputs: '' }] }] },
    },
  ],
  'lh-events': [{ version: 1, defaults: { name: '', codes: '' } }],
  'lh-dialog': [{ version: 1, defaults: { name: '', viewResult: '' } }],
  'lh-run': [{ version: 1, defaults: { name: '', operation: 'start', protocolId: '', protocolIdType: 'num', protocolName: '', simulate: 'msg', stopAtLoading: false, timeout: '300', pollInterval: '1' } }],
  'lh-run-watch': [{ version: 1, defaults: { name: '', interval: '5', progressInterval: '5', offlineAfter: '3', listen: true } }],
  'lh-run-data': [{ version: 1, defaults: { name: '', operation: 'report', runId: '', runIdType: 'str' } }],
};

/** The version a configuration of `type` has once migrated (0 for a type without steps). */
export function latestVersion(type: string, table: Readonly<Record<string, readonly MigrationStep[]>> = MIGRATIONS): number {
  const steps = table[type] ?? [];
  return steps.length > 0 ? steps[steps.length - 1].version : 0;
}

/** The dialog's defaults of `type` at its latest version (every step's defaults, later steps winning). */
export function dialogDefaults(type: string, table: Readonly<Record<string, readonly MigrationStep[]>> = MIGRATIONS): Record<string, unknown> {
  return Object.assign({}, ...(table[type] ?? []).map((s) => s.defaults ?? {})) as Record<string, unknown>;
}

/** The saved version: a whole number >= 0 (a string from a hand-written flow too); none or nonsense counts as 0. */
export function savedVersion(config: Record<string, unknown>): number {
  const v = Number(config.version);
  return config.version !== undefined && config.version !== '' && Number.isInteger(v) && v >= 0 ? v : 0;
}

/** A migrated configuration: its version, and the properties the steps filled in. */
export type Migrated = { version: number } & Record<string, unknown>;

/**
 * Applies one step to a copy of `config`. The copy keeps non-enumerable properties: the runtime passes a node its
 * flow (`_flow`, `_alias`) that way.
 */
export function applyStep<T extends Record<string, unknown>>(config: T, step: MigrationStep): T & Migrated {
  const out = Object.defineProperties({}, Object.getOwnPropertyDescriptors(config)) as Record<string, unknown>;
  for (const [from, to] of Object.entries(step.renames ?? {})) {
    if (from in out && out[to] === undefined) out[to] = out[from];
    delete out[from];
  }
  step.transform?.(out);
  for (const [key, value] of Object.entries(step.defaults ?? {})) {
    if (out[key] === undefined) out[key] = structuredClone(value);
  }
  out.version = step.version;
  return out as T & Migrated;
}

/**
 * `config` brought to the latest version of its type: every step newer than its saved version, in order. A
 * configuration of a newer version than this package knows (a downgrade) is left as it is.
 */
export function migrate<T extends Record<string, unknown> & { type: string }>(
  config: T,
  table: Readonly<Record<string, readonly MigrationStep[]>> = MIGRATIONS,
): T & Migrated {
  const from = savedVersion(config);
  let out = config as T & Migrated;
  for (const step of table[config.type] ?? []) if (step.version > from) out = applyStep(out, step);
  return out;
}

/** The one call in each node's constructor: `config = migrateConfig(config);`. */
export function migrateConfig(config: NodeConfig): NodeConfig {
  return migrate(config);
}
