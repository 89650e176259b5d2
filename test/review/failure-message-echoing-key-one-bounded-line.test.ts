/**
 * Review finding (review66): a refusal echoes what the msg held, raw. A body key with a line break
 * (`{"x\n[error] forged": NaN}` to lh-steps, an unknown settings key to lh-settings, a colour channel to
 * lh-instrument) started a forged line in Node-RED's log and in msg.error.message at Catch; a bidi override reordered
 * the line; a key of 200,000 characters made a message that long (and a protocolName the same). Every failure of an
 * operation node now shows one line of at most 1000 characters, a control or format character or lone surrogate half
 * as U+FFFD, cut in the middle so the field it names and the rule both stay.
 */
import assert from 'node:assert/strict';

import { MAX_FAILURE_MESSAGE } from '../../src/nodes/shared/operation-node';
import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;

describe('review: a failure that echoes the msg shows one bounded line', function () {
  const sim = useInstrument();
  const only = ['lh-server', 'lh-steps', 'lh-settings', 'lh-instrument'];
  const steps = configuredNode(sim, { id: 'steps', type: 'lh-steps' }, { only });
  const settings = configuredNode(sim, { id: 'settings', type: 'lh-settings' }, { only });
  const instrument = configuredNode(sim, { id: 'instrument', type: 'lh-instrument' }, { only, server: { withB: true } });

  const create = { operation: 'create', protocolId: '1', protocolIdType: 'num' };
  const step = { stepType: 'PauseStep', name: 'Pause' };
  const cases: { what: string; node: typeof steps; config: Msg; payload: unknown; shown: string; rule: RegExp }[] = [
    {
      what: 'a step key with a line break',
      node: steps,
      config: create,
      payload: { ...step, 'x\n[error] forged': NaN },
      shown: 'payload.x\ufffd[error] forged',
      rule: /must be a finite number \(got NaN\)$/,
    },
    {
      what: 'a settings key with a bidi override and an escape sequence',
      node: settings,
      config: { operation: 'set-software-settings' },
      payload: { '\u202e\u001b[31mred': 1 },
      shown: 'payload.\ufffd\ufffd[31mred',
      rule: /is not a software setting/,
    },
    {
      what: 'a colour channel with a lone surrogate half',
      node: instrument,
      config: { operation: 'lights-custom' },
      payload: { red: 1, green: 2, blue: 3, 'w\ud800': 4 },
      shown: 'payload.w\ufffd',
      rule: /is not a colour channel/,
    },
    {
      what: 'a step key of 200,000 characters',
      node: steps,
      config: create,
      payload: { ...step, ['k'.repeat(200_000)]: Infinity },
      shown: `payload.${'k'.repeat(100)}`,
      rule: /…k+ must be a finite number \(got Infinity\)$/,
    },
  ];

  for (const c of cases) {
    it(`${c.what}: one line at Catch and in the log, naming the field and the rule`, async function () {
      const loaded = await c.node.load(c.config);
      const failed = await loaded.runFailing({ payload: c.payload });
      const details = failed._error as Msg;
      const message = String(details.message);
      assert.doesNotMatch(message, UNSAFE);
      assert.ok(message.length <= MAX_FAILURE_MESSAGE, `a message of ${message.length} characters`);
      assert.ok(message.startsWith(c.shown), message.slice(0, 200));
      assert.match(message, c.rule);
      // what Node-RED gives Catch nodes and logs (its stack's first line with -v) is that line too
      const error = failed.error as Msg;
      assert.equal(error.message, `LhError: ${message}`);
      assert.equal(String(error.stack).split('\n')[0], `LhError: ${message}`);
      assert.equal(sim.requests.length, 0, 'a request was made');
    });
  }
});
