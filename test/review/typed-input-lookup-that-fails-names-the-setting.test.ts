/**
 * Review finding (review66): a typed input whose lookup fails, a JSONata expression that throws (`$number("x")` on a
 * msg's text) or does not parse, reached Catch nodes as "[object Object]" (JSONata throws plain objects, not Errors),
 * with no msg.error.field and as kind "response", as if the instrument had answered so: the user could not tell
 * which setting failed, nor why. A mustache template with a typo (`{{payload.id}`) the same, as "Unclosed tag at 13".
 * Now each is refused naming the setting and the reason, nothing is sent.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

type Msg = Record<string, unknown>;

describe('review: a typed input whose lookup fails is refused naming the setting', function () {
  const sim = useInstrument();
  const steps = configuredNode(sim, { id: 'steps', type: 'lh-steps' }, { only: ['lh-server', 'lh-steps'] });
  const errorLog = configuredNode(sim, { id: 'log', type: 'lh-error-log' }, { only: ['lh-server', 'lh-error-log'] });

  const cases: { what: string; node: typeof steps; config: Msg; field: string; why: RegExp }[] = [
    {
      what: 'a JSONata expression that throws',
      node: steps,
      config: { operation: 'list', protocolId: '$number(payload)', protocolIdType: 'jsonata' },
      field: 'protocolId',
      why: /Unable to cast value to a number/,
    },
    {
      what: 'a JSONata expression that does not parse',
      node: errorLog,
      config: { operation: 'get', errorId: '$string(', errorIdType: 'jsonata' },
      field: 'errorId',
      why: /Expected/,
    },
    {
      what: 'a msg path that is no path',
      node: steps,
      config: { operation: 'get', protocolId: '1', protocolIdType: 'num', stepId: 'a..b', stepIdType: 'msg' },
      field: 'stepId',
      why: /Invalid property expression/,
    },
    {
      what: 'a mustache template with a typo (a tag not closed)',
      node: steps,
      config: { operation: 'get', protocolId: '{{payload.protocolId}', protocolIdType: 'str', stepId: '1', stepIdType: 'num' },
      field: 'protocolId',
      why: /Unclosed tag at 21/,
    },
    {
      what: "a step name template with a section not closed (the dialog's Step name)",
      node: steps,
      config: { operation: 'create', protocolId: '1', protocolIdType: 'num', stepName: 'Mix {{#payload}}' },
      field: 'stepName',
      why: /Unclosed section "payload" at 16/,
    },
  ];

  for (const c of cases) {
    it(`${c.what}: one error at Catch naming ${c.field} and why, nothing sent`, async function () {
      const loaded = await c.node.load(c.config);
      const before = sim.requests.length;
      const details = await loaded.expectFailure(
        { payload: c.field === 'stepName' ? { stepType: 'PauseStep' } : 'not a number\n[error] forged' },
        c.field,
        new RegExp(`^${c.field}: this node's ${c.field} setting \\((jsonata|msg|template)\\) could not be read: ${c.why.source}`),
      );
      assert.equal(details.kind, 'validation');
      assert.doesNotMatch(String(details.message), /\[object Object\]|\n/);
      assert.equal(sim.requests.length, before, 'a request was made');
    });
  }
});
