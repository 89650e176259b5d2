// Hostile review finding: lh-instrument's edit dialog says "must be a whole number of °C from 0 to 105", "from 1 to
// 1000" (traces limit), but checked only the lower bound: a dialog °C of 150, a position of 5000 or a limit of 5000
// showed no red triangle and deployed as valid, and every msg then went to Catch refused by the node's own check.
// Seeded values of each num-typed field: the dialog accepts exactly what the node accepts (empty: the msg's value).
import assert from 'node:assert/strict';

import { celsius, deckPosition, traceQuery } from '../../src/client/deck';
import { editorDefinition } from '../support/editor-definition';
import { Rng } from '../support/prng';

type Check = (this: unknown, v: unknown, opt?: unknown) => boolean | string;

describe('lh-instrument: the edit dialog checks the same bounds as the node', function () {
  const defaults = editorDefinition('lh-instrument').defaults;
  const runtime: Record<'temperature' | 'position' | 'limit', (v: string) => unknown> = {
    temperature: (v) => celsius(Number(v)),
    position: (v) => deckPosition(Number(v)),
    limit: (v) => traceQuery({ limit: Number(v) }),
  };

  for (const field of ['temperature', 'position', 'limit'] as const) {
    it(`${field}: a num value the dialog accepts is one the node accepts, and the other way round (seeded)`, function () {
      const rng = new Rng(5050);
      const node = { id: 'n', type: 'lh-instrument', [`${field}Type`]: 'num', _: (k: string) => k };
      const dialog = (v: string): boolean => (defaults[field].validate as Check).call(node, v, {}) === true;
      const values = ['0', '1', '4', '105', '106', '999', '1000', '1001', '5000', '2147483647'];
      for (let i = 0; i < 300; i++) values.push(String(rng.int(-5, 3000)));
      for (const v of values) {
        let accepted = true;
        try {
          runtime[field](v);
        } catch {
          accepted = false;
        }
        assert.equal(dialog(v), accepted, `${field} ${v}: the node ${accepted ? 'accepts' : 'refuses'} it`);
      }
      assert.equal(dialog(''), true, 'empty: the msg’s value');
    });
  }
});
