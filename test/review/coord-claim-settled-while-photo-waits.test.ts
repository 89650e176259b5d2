/**
 * Review (review39). Coordinated, a raised msg is claimed in Redis under the holder's lease, then waits (up to 2 s) for
 * its deck photo before the node sends it; a node closing meanwhile hands it to its next instance, in memory only.
 * The gate settled the claim a round later, or at once when the holder left (a stop), as if the msg had gone out: a
 * Node-RED stopped (or killed after that round) while the msg waited took it with the process, and the replica taking
 * the lease over found the claim settled. The error was never notified. README: "Raised and resolved: at least once,
 * a second time only marked". Now a claim whose msg is not sent yet is held: no round and no leave settles it, so the
 * next holder (another replica, or the same Node-RED restarted) sends it again, marked `redelivered`.
 *
 * Real Node-RED processes, a real Redis, the simulator behind a proxy that holds the camera's requests.
 */
import assert from 'node:assert/strict';

import { HeldCameraProxy, startHeldCamera } from '../support/camera-proxy';
import { credentialsFor, leaseHolder, Replica, useReplicaFleet, watchFlows } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { startSimulator } from '../support/runtime';
import { until } from '../support/until';

const LEASE_S = 2;

describeWithRedis('review: coordinated, the holder stops while a raised msg waits for its photo', function () {
  this.timeout(90000);
  const db = useRedis();
  const fleet = useReplicaFleet('photo-hold');
  /** the simulator's camera, held (a proxy before it, started by each test) */
  let running: HeldCameraProxy | undefined;
  afterEach(async function () {
    running?.release();
    await running?.close();
    running = undefined;
  });

  /** The simulator, behind a proxy holding the camera; `n` replicas (r1 first, alone, so that it holds the lease). */
  async function start(
    n: number,
  ): Promise<{ sim: Awaited<ReturnType<typeof startSimulator>>; replicas: Replica[]; camera: HeldCameraProxy }> {
    const sim = await startSimulator();
    fleet.sims.push(sim);
    const camera = (running = await startHeldCamera(sim.baseUrl));
    const url = camera.url;
    const instruments = [{ id: 'i1', baseUrl: url }];
    // a deck photo with each raised error is the default (the flows leave the option unset)
    const flows = watchFlows({
      redisUrl: db.harness.url,
      prefix: fleet.prefix,
      leaseSeconds: LEASE_S,
      instruments,
      collectorUrl: fleet.collector.url,
      interval: 0.3,
    });
    const replicas: Replica[] = [];
    for (let i = 1; i <= n; i++) replicas.push(new Replica(`r${i}`, flows, credentialsFor(instruments)));
    fleet.replicas.push(...replicas);
    await replicas[0].start();
    await until(
      async () => (await leaseHolder(db.redis, fleet.prefix, { baseUrl: url }, replicas)) === replicas[0],
      'r1 holds',
      15000,
    );
    for (const r of replicas.slice(1)) await r.start();
    return { sim, replicas, camera };
  }

  const raisedOf = (id: string): { replica: string; redelivered?: string }[] =>
    fleet.collector.events.filter((e) => e.kind === 'raised' && e.id === id);

  for (const end of ['stopped', 'killed'] as const) {
    it(`the holder ${end} while the msg waits: the other replica raises the error, marked`, async function () {
      const { sim, replicas, camera } = await start(2);
      const [r1] = replicas;
      const error = sim.injectPendingError({ title: 'Arm collision' });
      await until(() => camera.held.length === 1, 'r1 claimed the error and asked the camera', 15000);
      // stopped: at once (Node-RED's stop leaves the coordination, which settled every claim); killed: once the round
      // after the claim has run (every lease / 3 s: it settled the claim), before the 2 s wait ends
      if (end === 'stopped') await r1.stop();
      else {
        await new Promise((r) => setTimeout(r, 1600));
        await r1.kill();
      }
      camera.hold = false;
      await until(() => raisedOf(String(error.id)).length > 0, 'the error raised', 20000).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 1000)); // nothing more comes
      assert.deepEqual(
        raisedOf(String(error.id)).map(({ replica, redelivered }) => ({ replica, redelivered })),
        [{ replica: 'r2', redelivered: 'holder-stopped' }],
        'raised once, by the replica that took over, marked as maybe sent before',
      );
    });
  }

  it('one Node-RED restarted while the msg waits: the restarted one raises the error, marked', async function () {
    const { sim, replicas, camera } = await start(1);
    const [r1] = replicas;
    const error = sim.injectPendingError({ title: 'Arm collision' });
    await until(() => camera.held.length === 1, 'r1 claimed the error and asked the camera', 15000);
    await r1.stop();
    camera.hold = false;
    await r1.start();
    await until(() => raisedOf(String(error.id)).length > 0, 'the error raised', 20000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(
      raisedOf(String(error.id)).map(({ replica, redelivered }) => ({ replica, redelivered })),
      [{ replica: 'r1', redelivered: 'holder-stopped' }],
    );
  });
});
