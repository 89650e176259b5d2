/**
 * Review finding (answer page behind several Node-REDs, Redis loses its data): the instrument's answer-link key is
 * kept in Redis, made once by the first replica that needs it; each page node reads it once when it starts and keeps
 * it. After a FLUSHALL (or a Redis restart without persistence, or the key evicted) the running replicas kept the old
 * key and nobody wrote it back: a replica restarted afterwards found none and made another. From then on the replicas
 * signed links with two keys, and a link in a notification opened on one replica only ("not a link of this page" on
 * the other, behind a load balancer half the clicks) until every replica restarted.
 * Real Node-RED processes, a real simulator, a real redis-server.
 */
import { derivedSecret } from '../../src/nodes/lh-answer-page/link-key';
import { type LinkClaims, signLink } from '../../src/nodes/lh-answer-page/link-signing';
import { describeWithRedis } from '../support/redis-server';
import { until } from '../support/until';
import { useAnswerPageReplicas } from './answer-page-replicas.support';

describeWithRedis('review: the answer-link key after Redis lost its data and a replica restarted', function () {
  this.timeout(120000);
  const prefix = `lh-review-linkkey-${process.pid}`;
  const { replicas, redis, link, opens } = useAnswerPageReplicas(prefix);
  const keyInRedis = async (): Promise<boolean> => (await redis().keys(`${prefix}:*:secret:answer-page-link-key`)).length > 0;

  it('a replica restarted after the loss finds the key the others sign with: every link opens on every replica', async function () {
    const before = await link('Clot detected');
    for (const r of replicas) await opens(before.query, r); // one key, shared

    await redis().flushall(); // a restart without persistence alike
    // the running replicas put the key they sign with back (within a refresh; else the restart below makes another,
    // and the links below say what that does)
    await until(keyInRedis, 'the link key back in Redis', 5000).catch(() => undefined);
    await before.other.stop();
    await before.other.start();

    const after = await link('Door open');
    for (const r of replicas) await opens(after.query, r);
    for (const r of replicas) await opens(before.query, r); // the link of the notification sent before the loss too
  });

  it('a replica that made another key first: the others sign with it within a refresh', async function () {
    // r1 frozen while Redis loses its data and r2 restarts: r2 finds no key and makes one
    const [r1, r2] = replicas;
    r1.pause();
    try {
      await redis().flushall();
      await r2.stop();
      await r2.start();
      await until(keyInRedis, 'the key r2 made', 10000);
    } finally {
      r1.resume();
    }
    // the key the group signs with now is the one in Redis: a link of the error signed with it opens on both replicas
    // once r1 has read it (a refresh, 2 s); a link r1 made before that is signed with the key it had
    const first = await link('Tip lost');
    const [name] = await redis().keys(`${prefix}:*:secret:answer-page-link-key`);
    const secret = derivedSecret(Buffer.from(String(await redis().get(name)), 'base64url'), 'page');
    const t = new URLSearchParams(first.query).get('t') ?? '';
    const claims = JSON.parse(Buffer.from(t.split('.')[0], 'base64url').toString()) as LinkClaims;
    const resigned = `?t=${signLink(claims, secret)}`;
    await until(
      () =>
        opens(resigned, r1).then(
          () => true,
          () => false,
        ),
      'r1 opens a link signed with the key in Redis',
      10000,
    );
    await opens(resigned, r2);
    // and links made from now on, by whichever replica, open on both
    const after = await link('Door open again');
    for (const r of replicas) await opens(after.query, r);
  });
});
