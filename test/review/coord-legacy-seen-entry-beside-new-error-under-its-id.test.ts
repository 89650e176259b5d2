/**
 * Review attack (coordination after an upgrade, real Redis): 0.4.0 kept one seen field per id (`A:7`); 0.4.1 keeps one
 * per error identity. An error 0.4.0 recorded and a new error the instrument lists beside it under the same id: the
 * new one is raised once, the old one never again, and each resolves once when it leaves, in either order. Held
 * (no fix needed): kept as a guard.
 */
import assert from 'assert';

import { fingerprint, identityOf } from '../../src/client/error-identity';
import { Coordinator } from '../../src/coordination/coordinator';
import { GateItem } from '../../src/coordination/error-gate';
import { CoordinationKeys } from '../../src/coordination/keys';
import { StoreRedis } from '../../src/coordination/stores';
import { SeenErrors } from '../../src/nodes/lh-error-poll/seen-errors';
import { describeWithRedis, useRedis } from '../support/redis-server';

interface Rec {
  id: string;
  title: string;
}

const INSTRUMENT = 'http://127.0.0.1:9|';
const name = (r: Rec): string => `${r.id}/${r.title}`;

describeWithRedis('review: a 0.4.0 seen entry beside a new error under its id', function () {
  this.timeout(60000);
  const db = useRedis();
  let run = 0;

  for (const order of ['new one leaves first', 'old one leaves first'] as const) {
    it(`raised once each at most, resolved once each (${order})`, async function () {
      const prefix = `lh-review-legacy-${process.pid}-${++run}`;
      const coordinator = new Coordinator({ redis: db.redis as unknown as StoreRedis, prefix, leaseMs: 60000, replica: 'r0' });
      try {
        coordinator.join(INSTRUMENT);
        const gate = coordinator.errorGate<Rec>(INSTRUMENT, 'poll', { keyOf: (_s: string, r: Rec) => r.id });
        const memory = new SeenErrors();
        const old = { id: '7', title: 'Clot detected' };
        const fresh = { id: '7', title: 'Door open' };
        const identity = fingerprint(identityOf(old) ?? { id: old.id, fields: {} });
        const hash = new CoordinationKeys(prefix).instrument(INSTRUMENT).shared('seen:poll');
        const body = { source: 'A', key: old.id, identity, record: old };
        await db.redis.hset(hash, 'A:7', `${identity}\n${JSON.stringify(body)}`);

        const sent: string[] = [];
        const poll = async (listed: Rec[]): Promise<void> => {
          const diff = memory.update(
            listed,
            (r) => r.id,
            () => true,
          );
          const item = (record: Rec): GateItem<Rec> => ({ source: 'A', record });
          const byKey = new Map<string, Rec[]>();
          for (const r of listed) byKey.set(r.id, [...(byKey.get(r.id) ?? []), r]);
          await gate.filter(diff.raised.map(item), diff.resolved.map(item), new Map([['A', byKey]]), (kind, it) =>
            sent.push(`${kind} ${name(it.record)}${it.redelivered ? ' (again)' : ''}`),
          );
        };
        for (let i = 0; i < 6 && coordinator.held().length === 0; i++) await coordinator.round();
        assert.equal(coordinator.held().length, 1, 'holds the instrument');

        await poll([old, fresh]);
        await poll([old, fresh]);
        await coordinator.round();
        const first = order === 'new one leaves first' ? old : fresh;
        await poll([first]);
        await coordinator.round();
        await poll([]);
        await coordinator.round();
        await poll([]);
        const gone = order === 'new one leaves first' ? fresh : old;
        assert.deepEqual(sent, ['raised 7/Door open', `resolved ${name(gone)}`, `resolved ${name(first)}`]);
        assert.deepEqual(await db.redis.hgetall(hash), {}, 'nothing left open');
      } finally {
        await coordinator.close();
      }
    });
  }
});
