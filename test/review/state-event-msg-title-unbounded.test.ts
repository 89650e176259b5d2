/**
 * Review finding (lh-state's event output, `lab/<instrument>/errors/<A|B>-<id>`): the document clips an error's texts
 * to 200 characters, but the raised / resolved event msgs carried the instrument's title, id and severity as given,
 * of any length, onto the broker ("every input bounded"). They are now bounded as the document's list is.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { StateMsg, StateNode } from '../../src/nodes/lh-state/state-node';
import { publishLab } from '../../src/observe/lab-events';

describe('review: lh-state event msgs are bounded as its document is', function () {
  it('any title, severity and responses: at most 200 characters each, responses whole or left out', function () {
    const events: StateMsg[] = [];
    const state = new StateNode({
      instrumentKey: 'k',
      instrument: 'X',
      stateTopic: 'lab/{{instrument}}/state',
      eventTopic: 'lab/{{instrument}}',
      perSecond: 50,
      emitting: () => true,
      send: (_doc, event) => void (event && events.push(event)),
      setTimer: () => 0,
      clearTimer: () => undefined,
    });
    try {
      fc.assert(
        fc.property(
          fc.string({ maxLength: 3000, size: 'max' }),
          fc.string({ minLength: 1, maxLength: 500, size: 'max' }),
          fc.array(fc.string({ minLength: 1, maxLength: 400, size: 'max' }), { maxLength: 12 }),
          (title, severity, responses) => {
            events.length = 0;
            const error = { source: 'A' as const, id: '1', title, severity, responses, seen: 't.abc' };
            publishLab({ instrumentKey: 'k', instrument: 'X', kind: 'raised', error, raisedAt: 0 });
            assert.equal(events.length, 1);
            const p = events[0].payload as Record<string, unknown>;
            assert.ok(String(p.title).length <= 200 && String(p.severity).length <= 200);
            for (const r of (p.responses as string[] | undefined) ?? []) assert.ok(responses.includes(r) && r.length <= 200);
            assert.equal('seen' in p, false, 'the identity fingerprint is the answer page’s');
          },
        ),
      );
    } finally {
      state.close();
    }
  });
});
