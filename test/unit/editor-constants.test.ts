// The edit dialogs repeat two runtime rules in the browser: the errorId pattern and the default notification
// template. These tests hold them to the runtime's single source, so a change on one side fails here.
import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';
import { validate } from '../../src/client';
import { dialogDefaults } from '../../src/nodes/shared/migrations';
import { DEFAULT_NOTIFICATION } from '../../src/nodes/shared/poll-messages';

const root = path.resolve(__dirname, '..', '..');
const html = (type: string): string => fs.readFileSync(path.join(root, 'src', 'nodes', type, `${type}.html`), 'utf8');

/** Every regular expression literal the dialog uses next to the text "errorId". */
function errorIdPatterns(source: string): RegExp[] {
  const found = [...source.matchAll(/(\/\^[^\n]*?\$\/)[^\n]*?"errorId"|"errorId",\s*(\/\^[^\n]*?\$\/)/g)].map(
    (m) => m[1] ?? m[2],
  );
  return found.map((literal) => new RegExp(literal.slice(1, -1)));
}

const SAMPLES = ['1', 'a.b_c~d:e-f', 'x'.repeat(200), 'x'.repeat(201), '', 'a/b', 'a b', '../x', 'é', 'a?b', 'a#b', '%2e'];

function runtimeAccepts(value: string): boolean {
  try {
    validate.errorId(value, 'errorId', 'test');
    return true;
  } catch {
    return false;
  }
}

describe('editor constants agree with the runtime', function () {
  for (const type of ['lh-answer-error', 'lh-error-log']) {
    it(`${type}: the dialog's errorId check accepts exactly what the client accepts`, function () {
      const patterns = errorIdPatterns(html(type));
      assert.equal(patterns.length, 1, `one errorId pattern in ${type}.html`);
      for (const sample of SAMPLES) assert.equal(patterns[0].test(sample), runtimeAccepts(sample), JSON.stringify(sample));
    });
  }

  it("lh-error-poll: the dialog's default notification template is the runtime's", function () {
    assert.equal(dialogDefaults('lh-error-poll').template, DEFAULT_NOTIFICATION);
    assert.ok(html('lh-error-poll').includes(`template: { value: ${JSON.stringify(DEFAULT_NOTIFICATION)} }`));
  });
});
