/**
 * Review finding (review68): since review64 lh-error-poll's raised and resolved msgs carry a copy of the record
 * made with structuredClone, whose serializer recurses: a record with a value nested about 2,000 levels deep (a
 * 14 KB answer, well inside the 32 MB answer cap; interface A's answers are not bounded in depth, only the event
 * frames are, at 128 levels) made it throw "Maximum call stack size exceeded". The node's memory had already taken
 * the error as reported, so the raised msg was dropped: the error was never raised, and never again while pending.
 *
 * Now the copy is bounded as the frames are: a value nested deeper than 128 levels is left out (a text that says
 * so), every other field is the instrument's. Property over depths on both sides of the stack's limit (seeded;
 * LH_SEED replays, LH_CASES draws more): the error is raised once, with its id and title, and resolved once.
 */
import assert from 'node:assert/strict';

import { TOO_DEEP } from '../../src/client/event-frames';
import { bServerFlow, pollNode } from '../nodes/lh-error-poll.support';
import { answerWith, pathOf, useAnswerProxy } from '../support/answer-proxy';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 2;

/** `{"a":{"a":…{"leaf":true}…}}`, `depth` objects deep. */
function nested(depth: number): unknown {
  let value: unknown = { leaf: true };
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** How deep a value nests (iteratively: the values here are deeper than a recursive walk may go). */
function depthOf(value: unknown): number {
  let depth = 0;
  let at = value;
  while (typeof at === 'object' && at !== null && 'a' in at) {
    at = (at as { a: unknown }).a;
    depth++;
  }
  return depth;
}

describe('review: an instrument error with a deeply nested field is still raised', function () {
  this.timeout(30_000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let depth = 0;
  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, up, res) => {
      if (depth === 0 || !pathOf(req).endsWith('/errors/check-for-pending-errors') || up.status !== 200) return false;
      const list = JSON.parse(up.body.toString('utf8')) as Msg[];
      for (const item of list) item.details = nested(depth);
      answerWith(res, 200, { 'content-type': 'application/json' }, JSON.stringify(list));
      return true;
    },
  );

  it(`raised once and resolved once, at any depth (seed ${SEED})`, async function () {
    const rng = new Rng(SEED);
    rng.next();
    // 2,500 and 4,000: past structuredClone's limit (about 1,900 objects); 200: past the bound, inside the limit
    const depths = [2500, ...[200, 4000, 1000, 3000].sort(() => rng.next() - 0.5)].slice(0, CASES);
    for (const d of depths) {
      depth = d;
      const server = bServerFlow(sim, { withB: false, config: { baseUrl: proxy.url } });
      await loadFlow(
        [
          ...server.nodes,
          pollNode([['raised'], ['resolved'], []]),
          { id: 'raised', type: 'helper' },
          { id: 'resolved', type: 'helper' },
        ],
        server.credentials,
      );
      const raised = collect(helper.getNode('raised'));
      const resolved = collect(helper.getNode('resolved'));
      const why = `seed ${SEED}, nested ${d} levels`;
      const error = sim.injectPendingError({ severity: 'Error', title: 'Tip lost' });
      await until(() => raised.length === 1, `${why}: the raised msg`, 10_000);
      const payload = raised[0].payload as Msg;
      assert.equal(raised[0].errorId, error.id, why);
      assert.equal(payload.title, 'Tip lost', why);
      assert.ok(depthOf(payload.details) <= 128, `${why}: msg.payload.details nests ${depthOf(payload.details)} levels`);
      if (d > 128) assert.ok(JSON.stringify(payload.details).includes(TOO_DEEP), `${why}: says what was left out`);
      sim.resolvePendingError(error.id);
      await until(() => resolved.length === 1, `${why}: the resolved msg`, 10_000);
      assert.equal(resolved[0].errorId, error.id, why);
      assert.equal(raised.length, 1, `${why}: raised ${raised.length} times`);
      await helper.unload();
      restartMemory();
    }
  });
});
