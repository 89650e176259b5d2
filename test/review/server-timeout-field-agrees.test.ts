/**
 * Hostile review (first hour, every dialog): lh-server's *Timeout (ms)* was checked with Node-RED's "number"
 * validator, and read by the node as "10 s when not a number above 0". The dialog saved 0 or -5 without a word and
 * the node used 10 s, silently; and an lh-server in a flow written by hand or by the admin API, without the property,
 * was marked invalid ("Invalid number", no field named) though the node reads it as the default. Now both read the
 * field with one rule (timeoutSetting): empty or missing is the default; otherwise milliseconds above 0. The dialog
 * refuses anything else naming the field; a node saved with such a value says so in the log and uses the default.
 */
import assert from 'node:assert/strict';

import { DEFAULT_TIMEOUT_MS, timeoutSetting } from '../../src/nodes/lh-server/timeout';
import { editorDefinition } from '../support/editor-definition';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;
type Check = (this: unknown, v: unknown, opt?: unknown) => boolean | string;

describe('review: lh-server Timeout (ms), one rule in the dialog and the node', function () {
  this.timeout(30000);
  const sim = useInstrument();
  const validate = editorDefinition('lh-server').defaults.timeout.validate as Check;
  const node = { type: 'lh-server', _: (k: string) => k };

  it('the dialog accepts what the node reads as asked, and refuses, naming the field, what it would replace', function () {
    const cases: [unknown, number | undefined][] = [
      [undefined, DEFAULT_TIMEOUT_MS],
      ['', DEFAULT_TIMEOUT_MS],
      [' ', DEFAULT_TIMEOUT_MS],
      [10000, 10000],
      ['30000', 30000],
      ['2500.5', 2500.5],
      ['0', undefined],
      [0, undefined],
      ['-5', undefined],
      ['abc', undefined],
      ['1e4', undefined],
      ['0x10', undefined],
    ];
    for (const [value, ms] of cases) {
      assert.equal(timeoutSetting(value), ms, `node: ${JSON.stringify(value)}`);
      assert.equal(validate.call(node, value) === true, ms !== undefined, `dialog: ${JSON.stringify(value)}`);
    }
    assert.equal(validate.call(node, '0', {}), 'lh-server.errors.timeout');
    const catalogue = require('../../nodes/nodes/lh-server/locales/en-US/lh-server.json') as Record<
      string,
      { errors: Record<string, string> }
    >;
    assert.match(catalogue['lh-server'].errors.timeout, /^Timeout \(ms\): a number of milliseconds above 0/);
  });

  it('a node saved with a timeout of 0 says so at start, naming the field; one left empty says nothing', async function () {
    const bad = serverFlow(sim, { id: 'bad', withB: false, config: { timeout: '0' } });
    const empty = serverFlow(sim, { id: 'empty', withB: false, config: { timeout: '' } });
    await helper.load([tlsConfigNode, ...packageNodes()], [...bad.nodes, ...empty.nodes], {
      ...bad.credentials,
      ...empty.credentials,
    });
    const warnings = (id: string): string[] =>
      (helper.log() as unknown as { args: [Msg][] }).args
        .map(([entry]) => entry)
        .filter((entry) => entry.id === id && entry.level === 30)
        .map((entry) => String(entry.msg));
    assert.deepEqual(warnings('bad'), [
      'timeout: "0" is not a number of milliseconds above 0: requests wait 10000 ms, the default (set Timeout (ms) in the lh-server node, or leave it empty)',
    ]);
    assert.deepEqual(warnings('empty'), []);
  });
});
