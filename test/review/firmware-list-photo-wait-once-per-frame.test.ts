/**
 * Review (review99's lists in one instincterrors frame; README "Deck photo": a msg waits at most 2 s for its photo and
 * goes on without one). lh-error-poll raised each error of a listed frame as a change of its own, and each change's
 * msgs wait for the change before: with a camera that does not answer, the first error's msg waited 2 s for the
 * photo, the second 2 s more, the k-th 2k s (ten errors: 20 s; the 500 a frame may list: until the camera request
 * timed out, then again after each 10 s photo interval), and the node's status was set once per error (500 status
 * updates to the editor for one frame).
 *
 * Property over drawn frames (seeded: LH_SEED replays, LH_CASES draws more), end to end on the simulator: a frame
 * listing 4 to 12 firmware errors (some twice, some resolved in the same list after their raise), the camera held
 * without an answer. Every error is raised once, each within 2 s of the frame (plus slack for a busy machine), each
 * msg saying why it has no photo; an error resolved in the list is resolved once, after its raised msg.
 */
import assert from 'node:assert/strict';

import { bServerFlow, pollNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;
/** the photo's wait, and what a busy machine adds to it */
const WITHIN_MS = 2000 + 2500;

type Msg = Record<string, unknown>;

function suite(coordinated: boolean): void {
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const db = coordinated ? useRedis() : undefined;

  it(`a camera that does not answer delays no error beyond 2 s (seed ${SEED}, ${CASES} frames)`, async function () {
    const server = bServerFlow(sim, { withB: false, config: db ? { coordination: 'coord' } : {} });
    const coord = db
      ? [{ id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix: `fw-list-${process.pid}`, leaseSeconds: 5 }]
      : [];
    await loadFlow(
      [
        ...coord,
        ...server.nodes,
        pollNode([['out'], ['out'], []], { interval: 60, snapshot: true }),
        { id: 'out', type: 'helper' },
      ],
      server.credentials,
    );
    const said: { at: number; event: string; id: string; photoError: boolean }[] = [];
    helper.getNode('out').on('input', (m: Msg) =>
      said.push({
        at: Date.now(),
        event: String(m.event),
        id: String(m.errorId),
        photoError: typeof m.snapshotError === 'string',
      }),
    );
    // the first poll answered (coordinated: under the lease, the shared memory swept), the socket open
    await until(
      () =>
        sim.eventSocketInfo.counts.errors > 0 &&
        sim.requests.some((r) => r.path.endsWith('/check-for-pending-errors') && r.status === 200),
      'the socket and the first poll',
      20000,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // every GET held (the camera's, and the polls' a frame triggers): the msgs of a frame depend on the photo alone
    sim.setFaults({ timeoutRate: 1, timeoutHoldMs: 30000, methods: ['GET'] });
    const rng = new Rng(SEED);
    try {
      for (let c = 0; c < CASES; c++) {
        const n = rng.int(4, 12);
        const ids = Array.from({ length: n }, (_, i) => `fw-${c}-${i}`);
        const items: Record<string, unknown>[] = [];
        const resolvedIds = new Set<string>();
        for (const id of ids) {
          const error = { id, title: `Channel fault ${id}`, message: 'Clot detected', source: 'Firmware' };
          items.push(error);
          if (rng.chance(0.2)) items.push(error); // listed twice: one error
          if (rng.chance(0.25)) {
            items.push({ id, resolved: true });
            resolvedIds.add(id);
          }
        }
        const label = `seed ${SEED} frame ${c}: ${n} errors, resolved ${[...resolvedIds].join(',')}`;
        const from = said.length;
        const sentAt = Date.now();
        sim.publishRawFrame('errors', JSON.stringify({ code: 'RuntimeError', description: 'errors', data: items }));
        const expected = n + resolvedIds.size;
        await until(() => said.length - from >= expected, `the msgs of ${label}`, 40000).catch((err: Error) => {
          throw new Error(`${err.message}: ${JSON.stringify(said.slice(from))}`);
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
        const mine = said.slice(from);
        assert.equal(mine.length, expected, `${label}: ${JSON.stringify(mine)}`);
        const raised = mine.filter((m) => m.event === 'raised');
        assert.deepEqual(raised.map((m) => m.id).sort(), [...ids].sort(), label);
        for (const m of raised) {
          assert.ok(m.at - sentAt <= WITHIN_MS, `${label}: ${m.id} raised ${m.at - sentAt} ms after the frame`);
          assert.ok(m.photoError, `${label}: ${m.id} says why it has no photo`);
        }
        for (const id of resolvedIds) {
          const order = mine.filter((m) => m.id === id).map((m) => m.event);
          assert.deepEqual(order, ['raised', 'resolved'], `${label}: ${id}`);
        }
      }
    } finally {
      sim.setFaults({});
    }
  });
}

describe('review: the errors of one listed frame wait for one photo, not one after another', function () {
  this.timeout(60000);
  suite(false);
});

describeWithRedis('review: the errors of one listed frame wait for one photo (coordinated)', function () {
  this.timeout(60000);
  suite(true);
});
