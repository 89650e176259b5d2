import assert from 'node:assert/strict';

import fc from 'fast-check';

import { LhError } from '../../src/client';
import { Reachable, ServerConnection } from '../../src/nodes/shared/server-connection';

const down = (): LhError => new LhError('cannot reach the instrument (socket hang up)', { kind: 'network', operation: 'poll' });

/** Feeds one request outcome per entry (true: answered) on interface A, in order, as the client reports them. */
function feed(connection: ServerConnection, outcomes: readonly boolean[]): void {
  outcomes.forEach((ok, i) =>
    connection.observe({ kind: 'request', api: 'A', sent: i + 1, latest: i + 1, error: ok ? undefined : down() }),
  );
}

describe('ServerConnection: the instrument going offline is told once, not per node or poll', function () {
  it('three unanswered polls: one offline with the reason; answered again: one online; more failures: nothing more', function () {
    const told: Reachable[] = [];
    const connection = new ServerConnection(undefined, (c) => told.push(c));
    feed(connection, [false, false, false, false, false, false, true, false, false]);
    assert.deepEqual(
      told.map((c) => c.state),
      ['offline', 'online'],
    );
    const offline = told[0];
    assert.ok(offline.state === 'offline');
    assert.deepEqual(offline.interfaces, ['A']);
    assert.match(String(offline.reason), /unreachable|socket hang up|cannot reach/);
  });

  it('any sequence of outcomes: offline and online alternate, offline first, one per change of the shared view', function () {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 60 }), fc.integer({ min: 1, max: 5 }), (outcomes, subscribers) => {
        const told: Reachable['state'][] = [];
        const connection = new ServerConnection(undefined, (c) => told.push(c.state));
        for (let i = 0; i < subscribers; i++) connection.subscribe({ apis: ['A'], onChange: () => undefined });
        // what a subscriber's view says after each outcome: the transitions the lh-server must tell, no more
        let last = 'online';
        const expected: string[] = [];
        outcomes.forEach((ok, i) => {
          connection.observe({ kind: 'request', api: 'A', sent: i + 1, latest: i + 1, error: ok ? undefined : down() });
          const v = connection.view(['A']).state;
          const now = v === 'offline' ? 'offline' : v === 'online' ? 'online' : last;
          if (now !== last) expected.push(now);
          last = now;
        });
        assert.deepEqual(told, expected);
        told.forEach((s, i) => assert.equal(s, i % 2 === 0 ? 'offline' : 'online'));
      }),
    );
  });
});
