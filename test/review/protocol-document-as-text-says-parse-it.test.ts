/**
 * Review finding (an export file hand-edited, read back): a desired protocol or a plan read from a file reaches
 * lh-protocol as a text (file-in, "a single utf8 string") or a Buffer when the flow has no json node. A text was
 * refused as "payload must be an object (got "{\"name\": …")", a Buffer as "payload.steps must be an array of
 * steps": neither says the file needs parsing, and the Buffer's names a field the file has. Both are refused now
 * saying what it is and to parse it with a json node, naming the field; nothing is sent, the error reaches Catch.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: lh-protocol given a file as a text or a Buffer says to parse it', function () {
  const sim = useInstrument();
  const { load } = configuredNode(sim, { id: 'protocol', type: 'lh-protocol' }, { only: ['lh-server', 'lh-protocol'] });

  const file = JSON.stringify({ name: 'Demo', steps: [{ name: 'Close lid', stepType: 'LidStep', disabled: false }] });
  const cases: { what: string; msg: Msg; field: string; it: string }[] = [
    { what: 'plan, payload a text', msg: { operation: 'plan', protocolId: 1, payload: file }, field: 'payload', it: 'a text' },
    {
      what: 'plan, payload a Buffer',
      msg: { operation: 'plan', protocolId: 1, payload: Buffer.from(file) },
      field: 'payload',
      it: 'a Buffer',
    },
    {
      what: 'plan, bad JSON text',
      msg: { operation: 'plan', protocolId: 1, payload: '{"steps": [' },
      field: 'payload',
      it: 'a text',
    },
    { what: 'apply, plan a text', msg: { operation: 'apply', plan: '{"id":"p1"}' }, field: 'plan', it: 'a text' },
  ];
  for (const c of cases) {
    it(`${c.what}: refused naming ${c.field}, to parse it with a json node; nothing sent`, async function () {
      const node = await load({ operation: 'msg', protocolId: '' });
      const logged = sim.requests.length;
      const error = await node.expectFailure(
        c.msg,
        c.field,
        new RegExp(`it is ${c.it} \\(a file's content\\?\\): parse it first with a json node`),
      );
      assert.equal(error.kind, 'validation');
      assert.deepEqual(sim.requests.slice(logged), [], 'nothing sent');
    });
  }
});
