/**
 * A Redis that refuses INFO (renamed away with `rename-command INFO ""`, a hardening some guides advise, or denied by
 * an ACL): the server's run id (read with the group's epoch) is unknown, so a restart is not told by it; coordination
 * itself must go on. The connection must become ready (a client's ready check by INFO would fail for ever) and
 * rounds must take, hold and hand over leases as with any Redis. Real redis-server.
 */
import assert from 'assert';

import Redis from 'ioredis';

import { connectRedis, CoordinationRedis } from '../../src/coordination/connect';
import { Coordinator } from '../../src/coordination/coordinator';
import { CoordinationKeys } from '../../src/coordination/keys';
import { Leases } from '../../src/coordination/leases';
import { describeWithRedis, RedisHarness } from '../support/redis-server';

const INSTRUMENT = 'http://127.0.0.1:9|';

for (const how of ['renamed', 'denied by an ACL'] as const) {
  describeWithRedis(`coordination: a Redis whose INFO is ${how}`, function () {
    this.timeout(10000);
    const harness = new RedisHarness(how === 'renamed' ? ['--rename-command', 'INFO', ''] : []);
    const clients: CoordinationRedis[] = [];
    const coordinators: Coordinator[] = [];
    let credentials: { username?: string; password?: string } = {};

    before(async function () {
      if (harness.external) this.skip(); // the server is started with its own arguments
      await harness.start();
      if (how === 'denied by an ACL') {
        const admin = new Redis(harness.url, { enableReadyCheck: false });
        await admin.call('ACL', 'SETUSER', 'lab', 'on', '>lab-pass', '~*', '&*', '+@all', '-info');
        admin.disconnect();
        credentials = { username: 'lab', password: 'lab-pass' };
      }
    });
    after(async function () {
      for (const c of coordinators.splice(0)) await c.close().catch(() => undefined);
      for (const c of clients.splice(0)) c.disconnect();
      await harness.destroy();
    });

    function connect(): CoordinationRedis {
      const settings = {
        urls: [harness.url],
        mode: 'single' as const,
        sentinelName: '',
        prefix: 'lh-info',
        leaseMs: 3000,
        database: 0,
      };
      const redis = connectRedis(settings, credentials);
      redis.on('error', () => undefined);
      clients.push(redis);
      return redis;
    }

    it('the connection becomes ready and the epoch is read without a run id', async function () {
      const redis = connect();
      await ready(redis); // before: reconnecting for ever (its ready check is an INFO)
      const seen = await new Leases(redis, new CoordinationKeys('lh-info')).epoch('candidate');
      assert.deepEqual(seen, { epoch: 'candidate', server: '' });
    });

    it('a replica takes the lease and another takes it over once it leaves', async function () {
      const [a, b] = await Promise.all(
        ['r0', 'r1'].map(async (replica) => {
          const redis = connect();
          await ready(redis);
          const c = new Coordinator({ redis, prefix: 'lh-info-group', leaseMs: 60000, replica });
          coordinators.push(c);
          c.join(INSTRUMENT);
          return c;
        }),
      );
      // a few rounds at most: on a very busy machine a round may fail as a blip (run 44 of the CI-like series)
      for (let i = 0; i < 5 && a.held().length + b.held().length === 0; i++) {
        await a.round();
        await b.round();
      }
      assert.deepEqual(a.held().length + b.held().length, 1, 'one replica holds the instrument');
      const [holder, other] = a.held().length === 1 ? [a, b] : [b, a];
      await holder.close();
      for (let i = 0; i < 5 && other.held().length === 0; i++) await other.round();
      assert.equal(other.held().length, 1, 'the other replica took the lease over');
    });
  });
}

/** Resolves once the connection is ready (the suite's timeout fails a test whose connection never is). */
async function ready(redis: CoordinationRedis): Promise<void> {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
}
