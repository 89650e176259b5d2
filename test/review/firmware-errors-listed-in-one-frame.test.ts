/**
 * Review (observed-instrument.md: firmware errors during a run arrive on `instincterrors` only; "the exact error-frame
 * shape: not documented"; frames are JSON inside JSON strings). An instrument that pushes its errors as a list (as
 * `check-for-pending-errors` lists them: `data` an array, a JSON text of one, or the whole frame an array) had every
 * error of such a frame read as "unrecognised": nothing raised, nothing logged, and the poll the frame triggers never
 * finds a firmware error (the error list does not hold them). The errors were dropped, silently.
 *
 * Property over drawn frames (seeded: LH_SEED replays, LH_CASES draws more): 1 to 4 errors, each with or without an
 * id, keys in camelCase or PascalCase, the list as `data`, as a JSON text in `data`, or as the bare frame; a resolving
 * frame listing the ids (objects or bare ids). Every error is raised exactly once, and each listed resolution
 * resolves it: read by the client, and end to end by lh-error-poll on the simulator's socket.
 */
import assert from 'node:assert/strict';

import { eventFromFrame, firmwareErrorsFromFrame } from '../../src/client/event-frames';
import { bServerFlow, pollNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 60;
const NODE_CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;

type Msg = Record<string, unknown>;
type Shape = 'data' | 'data-text' | 'bare';

interface Drawn {
  errors: { id: string; title: string; message: string; withId: boolean }[];
  shape: Shape;
  pascal: boolean;
  /** the resolution lists bare ids instead of objects */
  bareIds: boolean;
}

function draw(rng: Rng, tag: string): Drawn {
  const n = rng.int(1, 4);
  const errors = Array.from({ length: n }, (_, i) => ({
    id: `fw-${tag}-${i}`,
    title: `Channel ${i + 1} pressure fault (${tag})`,
    message: `Clot detected on channel ${i + 1}`,
    // without an id the client gives a stable one (a hash): only the resolution needs the instrument's own
    withId: rng.chance(0.75),
  }));
  return { errors, shape: rng.pick(['data', 'data-text', 'bare'] as const), pascal: rng.chance(0.5), bareIds: rng.chance(0.5) };
}

function cased(obj: Record<string, unknown>, pascal: boolean): Record<string, unknown> {
  if (!pascal) return obj;
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k[0].toUpperCase() + k.slice(1), v]));
}

function frameOf(d: Drawn, code: string, items: unknown[]): string {
  if (d.shape === 'bare') return JSON.stringify(items);
  const data = d.shape === 'data-text' ? JSON.stringify(items) : items;
  return JSON.stringify(cased({ code, description: `${items.length} errors`, data }, d.pascal));
}

function raisedFrame(d: Drawn): string {
  const items = d.errors.map((e) =>
    cased(
      {
        ...(e.withId ? { id: e.id } : {}),
        title: e.title,
        message: e.message,
        severity: 'Error',
        errorResponses: [{ response: 'Retry' }, { response: 'Abort' }],
        source: 'Firmware',
      },
      d.pascal,
    ),
  );
  return frameOf(d, 'RuntimeError', items);
}

/** The resolution of the errors with an id (a bare frame has no code: its elements say `resolved: true`). */
function resolvedFrame(d: Drawn): string | undefined {
  const ids = d.errors.filter((e) => e.withId).map((e) => e.id);
  if (ids.length === 0) return undefined;
  const items =
    d.bareIds && d.shape !== 'bare'
      ? ids
      : ids.map((id) => cased({ id, ...(d.shape === 'bare' ? { resolved: true } : {}) }, d.pascal));
  return frameOf(d, 'RuntimeErrorResolved', items);
}

describe('review: firmware errors listed in one instincterrors frame', function () {
  this.timeout(60000);

  it(`the client reads every error of a drawn frame (seed ${SEED}, ${CASES} cases)`, function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const d = draw(rng, `c${c}`);
      const label = `seed ${SEED} case ${c}: ${JSON.stringify(d)}`;
      const raised = firmwareErrorsFromFrame(eventFromFrame(raisedFrame(d)));
      assert.equal(raised.length, d.errors.length, label);
      raised.forEach((r, i) => {
        assert.equal(r.kind, 'raised', label);
        if (r.kind !== 'raised') return;
        const e = d.errors[i];
        if (e.withId) assert.equal(r.error.id, e.id, label);
        assert.equal(r.error.title, e.title, label);
        assert.equal(r.error.message, e.message, label);
        assert.deepEqual(r.error.errorResponses, [{ response: 'Retry' }, { response: 'Abort' }], label);
        assert.equal(r.error.source, 'firmware', label);
      });
      assert.equal(new Set(raised.map((r) => r.kind === 'raised' && r.error.id)).size, d.errors.length, `distinct ids: ${label}`);
      const resolution = resolvedFrame(d);
      if (resolution === undefined) continue;
      const resolved = firmwareErrorsFromFrame(eventFromFrame(resolution));
      assert.deepEqual(
        resolved,
        d.errors.filter((e) => e.withId).map((e) => ({ kind: 'resolved', resolvedId: e.id })),
        label,
      );
    }
  });

  it('an empty list and a list longer than the cap say so instead of raising or resolving anything', function () {
    assert.deepEqual(firmwareErrorsFromFrame(eventFromFrame('{"code":"RuntimeError","description":"","data":"[]"}')), [
      { kind: 'unrecognised', reason: 'the frame lists no error' },
    ]);
    const many = Array.from({ length: 501 }, (_, i) => ({ id: `e${i}`, title: 't' }));
    const out = firmwareErrorsFromFrame({ code: 'runtimeerror', description: '', data: many });
    assert.equal(out.length, 501);
    assert.equal(out.filter((f) => f.kind === 'raised').length, 500);
    assert.match(out[500].kind === 'unrecognised' ? out[500].reason : '', /lists 501 errors/);
  });

  describe('end to end: lh-error-poll on the simulator', function () {
    const sim = useInstrument({ afterEach: () => restartMemory() });

    it(`raises every listed error once and resolves each (seed ${SEED}, ${NODE_CASES} frames)`, async function () {
      const server = bServerFlow(sim, { withB: false });
      await loadFlow(
        [
          ...server.nodes,
          pollNode([['raised'], ['resolved'], []], { interval: 60 }),
          { id: 'raised', type: 'helper' },
          { id: 'resolved', type: 'helper' },
        ],
        server.credentials,
      );
      const raised: Msg[] = collect(helper.getNode('raised'));
      const resolved: Msg[] = collect(helper.getNode('resolved'));
      await until(() => sim.eventSocketInfo.counts.errors > 0, 'the errors socket', 20000);
      const rng = new Rng(SEED + 1);
      let expectedRaised = 0;
      let expectedResolved = 0;
      for (let c = 0; c < NODE_CASES; c++) {
        const d = draw(rng, `n${c}`);
        const label = `seed ${SEED} frame ${c}: ${JSON.stringify(d)}`;
        sim.publishRawFrame('errors', raisedFrame(d));
        expectedRaised += d.errors.length;
        await until(() => raised.length >= expectedRaised, `the raised msgs of ${label}`, 10000);
        const titles = raised.slice(-d.errors.length).map((m) => (m.payload as Msg).title);
        assert.deepEqual([...titles].sort(), d.errors.map((e) => e.title).sort(), label);
        assert.ok(
          raised.slice(-d.errors.length).every((m) => (m.payload as Msg).source === 'firmware'),
          label,
        );
        const resolution = resolvedFrame(d);
        if (resolution === undefined) continue;
        sim.publishRawFrame('errors', resolution);
        const withId = d.errors.filter((e) => e.withId).map((e) => e.id);
        expectedResolved += withId.length;
        await until(() => resolved.length >= expectedResolved, `the resolved msgs of ${label}`, 10000);
        assert.deepEqual(
          resolved
            .slice(-withId.length)
            .map((m) => m.errorId)
            .sort(),
          [...withId].sort(),
          label,
        );
      }
      // nothing twice: a frame is one push of each of its errors
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(raised.length, expectedRaised);
      assert.equal(resolved.length, expectedResolved);
    });
  });
});
