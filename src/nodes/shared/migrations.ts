/**
 * Versioned config migrations: a node's saved configuration carries `version`; a configuration of an older
 * version (or none: a flow written by hand, by an API, or by 0.1) goes through each newer step of its type, which
 * renames changed properties and fills missing ones with the edit dialog's defaults. The tables below are the single
 * source of those defaults: the build generates each edit dialog's `defaults` and `version` from them, and the dialog
 * applies the same steps (src/contract/migration-steps.ts) to a node it opens.
 */
import {
  applyStep,
  dialogDefaults as stepsDialogDefaults,
  latestVersion as stepsLatestVersion,
  migrate as stepsMigrate,
  type Migrated,
  type MigrationStep,
  type MigrationTable,
  savedVersion,
} from '../../contract/migration-steps';
import { type NodeConfig } from './node-red';
import { DEFAULT_NOTIFICATION } from './poll-messages';

export { applyStep, savedVersion };
export type { Migrated, MigrationStep, MigrationTable };
import { derivedRuleId } from '../../contract/migration-transforms';
export { rulesToLadders } from '../../contract/migration-transforms';

/** The rule a new error policy starts with (notify every error). */
const DEFAULT_RULE = {
  source: 'any',
  minSeverity: '',
  pattern: '',
  code: '',
  steps: [{ mode: 'manual', answer: '', delay: 120, inputs: '' }],
};

/**
 * Steps per node type, oldest first. Required settings without a meaningful default (the lh-server reference,
 * the instrument's baseUrl, a tls-config reference) are left out on purpose: a missing one must fail clearly.
 * A new node type adds one line: `'lh-foo': [{ version: 1, defaults: { name: '', operation: 'list' } }],`.
 */
export const MIGRATIONS: MigrationTable = {
  'lh-server': [
    {
      version: 1,
      defaults: {
        name: '',
        instrumentUrl: '',
        allowInsecureInstrument: false,
        clientKey: '',
        simulatorCa: false,
        timeout: 10000,
      },
    },
    // 0.3: several Node-REDs through Redis (issue 19); empty is "this Node-RED only", as before
    { version: 2, defaults: { coordination: '' } },
  ],
  'lh-coordination': [
    {
      version: 1,
      defaults: { name: '', url: 'redis://127.0.0.1:6379', mode: 'single', sentinelName: '', prefix: 'labwire', leaseSeconds: 5 },
    },
  ],
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
    // Remember on by default (issue 32): its memory in a file of the user directory unless a context store is chosen;
    // a deck photo with each raised error where the instrument has a camera (issue 33)
    { version: 3, transform: 'rememberSeenErrors', defaults: { persist: true, snapshot: true } },
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
    {
      version: 1,
      defaults: { name: '', operation: 'list', routineId: '', routineIdType: 'num', recommendedOnly: false, markRunNow: false },
    },
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
  'lh-answer-page': [
    {
      version: 1,
      defaults: {
        name: '',
        publicUrl: 'LH_PUBLIC_URL',
        publicUrlType: 'env',
        path: '/lh-answer',
        expiryHours: 24,
        linkText: 'Answer: {{answerUrl}}',
      },
    },
    { version: 2, defaults: { snapshot: true } },
  ],
  'lh-error-policy': [
    {
      version: 1,
      defaults: {
        name: '',
        rules: [{ source: 'any', minSeverity: '', pattern: '', code: '', mode: 'manual', answer: '', delay: 120 }],
        by: 'policy',
        store: '',
      },
    },
    {
      version: 2,
      transform: 'rulesToLadders',
      defaults: {
        rules: [DEFAULT_RULE],
      },
    },
    // every rule gets a stable id (ladders count per rule id); saved rules get one derived from what they match
    { version: 3, transform: 'ruleIds', defaults: { rules: [{ id: derivedRuleId(DEFAULT_RULE, new Set()), ...DEFAULT_RULE }] } },
  ],
  'lh-events': [{ version: 1, defaults: { name: '', codes: '' } }],
  'lh-dialog': [{ version: 1, defaults: { name: '', viewResult: '' } }],
  'lh-run': [
    {
      version: 1,
      defaults: {
        name: '',
        operation: 'start',
        protocolId: '',
        protocolIdType: 'num',
        protocolName: '',
        simulate: 'msg',
        stopAtLoading: false,
        timeout: '300',
        pollInterval: '1',
      },
    },
  ],
  'lh-run-watch': [{ version: 1, defaults: { name: '', interval: '5', progressInterval: '5', offlineAfter: '3', listen: true } }],
  'lh-run-data': [{ version: 1, defaults: { name: '', operation: 'report', runId: '', runIdType: 'str' } }],
  'lh-instrument': [
    {
      version: 1,
      defaults: {
        name: '',
        operation: 'heater-status',
        temperature: '',
        temperatureType: 'num',
        colour: '',
        colourType: 'str',
        position: '',
        positionType: 'num',
        rectified: true,
        offset: '',
        offsetType: 'num',
        limit: '',
        limitType: 'num',
        sources: '',
      },
    },
  ],
  'lh-state': [
    {
      version: 1,
      defaults: {
        name: '',
        topic: 'lab/{{instrument}}/state',
        eventTopic: 'lab/{{instrument}}',
        rate: '2',
        machineInterval: '30',
        repeat: '60',
      },
    },
  ],
  'lh-protocol': [{ version: 1, defaults: { name: '', operation: 'export', protocolId: '', protocolIdType: 'num' } }],
};

/** The version a configuration of `type` has once migrated (0 for a type without steps). */
export function latestVersion(type: string, table: MigrationTable = MIGRATIONS): number {
  return stepsLatestVersion(type, table);
}

/** The dialog's defaults of `type` at its latest version (every step's defaults, later steps winning). */
export function dialogDefaults(type: string, table: MigrationTable = MIGRATIONS): Record<string, unknown> {
  return stepsDialogDefaults(type, table);
}

/**
 * `config` brought to the latest version of its type: every step newer than its saved version, in order. A
 * configuration of a newer version than this package knows (a downgrade) is left as it is.
 */
export function migrate<T extends Record<string, unknown> & { type: string }>(
  config: T,
  table: MigrationTable = MIGRATIONS,
): T & Migrated {
  return stepsMigrate(config, table);
}

/** The one call in each node's constructor: `config = migrateConfig(config);`. */
export function migrateConfig(config: NodeConfig): NodeConfig {
  return migrate(config);
}
