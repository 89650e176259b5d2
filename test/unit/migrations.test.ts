import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';

import {
  applyStep,
  dialogDefaults,
  latestVersion,
  migrate,
  MIGRATIONS,
  MigrationStep,
  savedVersion,
} from '../../src/nodes/shared/migrations';
import { DEFAULT_NOTIFICATION } from '../../src/nodes/shared/poll-messages';
import { editorDefinition, PropertyDef } from '../support/editor-definition';

const root = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  'node-red': { nodes: Record<string, string> };
};
const types = Object.keys(pkg['node-red'].nodes);

/** Settings the tables leave out on purpose: required, with no default that could stand in for a missing one. */
const REQUIRED: Record<string, string[]> = { 'lh-server': ['baseUrl', 'tls'] };

/** The `defaults` a node's built html registers with the editor (generated from the tables by scripts/build.js). */
function htmlDefaults(type: string): Record<string, PropertyDef> {
  return editorDefinition(type).defaults;
}

describe('config migrations', function () {
  describe('the tables', function () {
    for (const type of types) {
      it(`${type}: has a table whose defaults are the dialog's, and the dialog saves its version`, function () {
        const dialog = htmlDefaults(type);
        const table = dialogDefaults(type);
        assert.equal(dialog.version?.value, latestVersion(type), 'the html default of version is the latest version');
        for (const [key, def] of Object.entries(dialog)) {
          if (key === 'version') continue;
          if (def.type && def.type !== 'tls-config' && !key.endsWith('Type')) continue; // a config node reference (server)
          if (REQUIRED[type]?.includes(key)) {
            assert.ok(!(key in table), `${key} is required and has no table default`);
            continue;
          }
          // the html's objects come from another realm (vm): compare their JSON form
          assert.deepEqual(table[key], JSON.parse(JSON.stringify(def.value ?? null)) ?? def.value, `${type}.${key}`);
        }
        for (const key of Object.keys(table)) assert.ok(key in dialog, `${type}.${key} is in the table but not in the dialog`);
      });
    }

    it('the error poll notification default is the runtime one', function () {
      assert.equal(dialogDefaults('lh-error-poll').template, DEFAULT_NOTIFICATION);
    });
  });

  describe('version 0 → 1 (no version: a hand-written flow, an API, 0.1)', function () {
    it('lh-submit-recovery without kind submits as the dialog default (recovery)', function () {
      const out = migrate({ id: 'n', type: 'lh-submit-recovery', server: 's', selectedActionId: '3' });
      assert.equal(out.kind, 'recovery');
      assert.equal(out.selectedActionId, '3', 'a saved value stays');
      assert.equal(out.uuidType, 'str');
      assert.equal(out.version, 1);
    });

    it('fills every missing property of every type and keeps what is set, even empty or false', function () {
      for (const type of types) {
        const out = migrate({ id: 'n', type });
        for (const [key, value] of Object.entries(dialogDefaults(type))) assert.deepEqual(out[key], value, `${type}.${key}`);
      }
      const poll = migrate({ id: 'n', type: 'lh-error-poll', template: '', persist: 'true', interval: '2' });
      assert.equal(poll.template, '');
      assert.equal(poll.persist, 'true');
      assert.equal(poll.interval, '2');
      assert.equal(poll.offlineAfter, 3);
    });

    it('leaves the saved config alone (a copy is migrated) and does not share default objects', function () {
      const saved = { id: 'n', type: 'lh-clear-errors' };
      const out = migrate(saved);
      assert.deepEqual(saved, { id: 'n', type: 'lh-clear-errors' });
      assert.equal(out.name, '');
    });

    it("keeps the runtime's non-enumerable properties (the node's flow)", function () {
      const saved = Object.defineProperty({ id: 'n', type: 'lh-settings' }, '_flow', { value: 'flow', enumerable: false });
      assert.equal((migrate(saved) as Record<string, unknown>)._flow, 'flow');
    });

    it('a config of the latest version is returned as it is', function () {
      const saved = { id: 'n', type: 'lh-settings', version: 1, mode: undefined };
      assert.equal(migrate(saved), saved);
    });
  });

  describe('the step machinery (renames, several steps, versions)', function () {
    const table: Record<string, MigrationStep[]> = {
      'lh-x': [
        { version: 1, defaults: { interval: 5, list: [] } },
        { version: 2, renames: { interval: 'intervalSeconds' }, defaults: { mode: 'merge' } },
      ],
    };

    it('runs every step newer than the saved version, renaming before filling', function () {
      assert.deepEqual(migrate({ id: 'n', type: 'lh-x' }, table), {
        id: 'n',
        type: 'lh-x',
        list: [],
        intervalSeconds: 5,
        mode: 'merge',
        version: 2,
      });
      assert.deepEqual(migrate({ id: 'n', type: 'lh-x', version: 1, interval: 9 }, table), {
        id: 'n',
        type: 'lh-x',
        intervalSeconds: 9,
        mode: 'merge',
        version: 2,
      });
    });

    it('a rename does not overwrite the new property when both are set', function () {
      assert.deepEqual(applyStep({ interval: 1, intervalSeconds: 2 }, table['lh-x'][1]), {
        intervalSeconds: 2,
        mode: 'merge',
        version: 2,
      });
    });

    it('a newer version than known (a downgrade) is left alone; a type without steps too', function () {
      const newer = { id: 'n', type: 'lh-x', version: 7 };
      assert.equal(migrate(newer, table), newer);
      const other = { id: 'n', type: 'function' };
      assert.equal(migrate(other, table), other);
      assert.equal(latestVersion('function', table), 0);
    });

    it('default values are copies', function () {
      const a = migrate({ id: 'a', type: 'lh-x' }, table);
      (a.list as unknown[]).push(1);
      assert.deepEqual(migrate({ id: 'b', type: 'lh-x' }, table).list, []);
    });

    it('reads the saved version from numbers and strings; anything else is 0', function () {
      assert.equal(savedVersion({ version: 2 }), 2);
      assert.equal(savedVersion({ version: '1' }), 1);
      assert.equal(savedVersion({ version: '' }), 0);
      assert.equal(savedVersion({ version: 1.5 }), 0);
      assert.equal(savedVersion({}), 0);
    });
  });

  it('every registered node type has a table', function () {
    for (const type of types) assert.ok(MIGRATIONS[type], type);
  });
});
