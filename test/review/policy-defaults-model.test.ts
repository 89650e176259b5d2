/**
 * review43: a model-based test of the error policy's pending defaults (the part lh-error-policy.model.test.ts leaves
 * out: its defaults never fall due). Seeded random sequences of errors raised (Warning, Error, Fatal), the same id
 * raised again for another error (the instrument reused it), errors resolved on the instrument, answered by a person
 * through an lh-answer-error node on the other spelling of the instrument's URL, time passing, redeploys (some
 * respelling the policy's lh-server URL) and restarts of Node-RED (a persistent context store), against a real
 * Node-RED runtime and the simulator.
 *
 * The model (README, "error policy"): a rule of minimum severity Error, semi-automatic Retry after 30 s. After every
 * operation the instrument has received exactly the answers the model expects, each error at most one: the person's
 * answer, or the policy's default once its deadline passed, never a default for a Warning, for an error resolved or
 * answered before its deadline, or for the earlier error of a reused id; a default fires once across redeploys and
 * restarts. LH_MODEL_SEED replays a sequence; LH_MODEL_RUNS × LH_MODEL_STEPS (default 3 × 30) sizes the run.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { loadWithPage } from '../nodes/lh-answer-page.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, runtimeSettings, serverFlow } from '../support/runtime';

type Msg = Record<string, unknown>;
type Clock = ReturnType<typeof FakeTimers.install>;

const RUNS = Math.max(1, Number(process.env.LH_MODEL_RUNS) || 3);
const STEPS = Math.max(1, Number(process.env.LH_MODEL_STEPS) || 30);
const SEED = process.env.LH_MODEL_SEED ? Number(process.env.LH_MODEL_SEED) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
const DELAY_S = 30;
const RANK: Record<string, number> = { Warning: 1, Error: 2, Fatal: 3 };

/** Lets real I/O run (setTimeout is faked) until `check` holds, at most `ms` of real time. */
async function settled(check: () => boolean, ms = 3000): Promise<void> {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await new Promise((r) => setImmediate(r));
}

/** One error the instrument raised (an id reused later is another error). */
interface ModelError {
  id: string;
  record: Msg;
  severity: string;
  state: 'pending' | 'resolved' | 'person' | 'policy' | 'replaced';
  /** when the policy's default falls due (a rule matched it) */
  deadline?: number;
}

function otherSpelling(baseUrl: string): string {
  const u = new URL(baseUrl);
  return `HTTP://LOCALHOST:${u.port}${u.pathname.replace(/\/+$/, '')}/`;
}

describe('review: error policy pending defaults, model-based over seeded random sequences', function () {
  this.timeout(60_000 + RUNS * STEPS * 3000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let clock: Clock | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
    runtimeSettings({ contextStorage: undefined });
  });

  const puts = (): string[] =>
    sim.requests
      .filter((r) => r.method === 'PUT' && r.path === '/api/v1/errors/runtime')
      .map((r) => `${String((r.body as Msg).id)}:${String((r.body as Msg).selectedResponse)}`);

  it(`answers exactly as the model says (seed ${SEED}, ${RUNS} × ${STEPS}; LH_MODEL_SEED to replay)`, async function () {
    console.log(`      model seed: LH_MODEL_SEED=${SEED}`);
    runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
    const rand = new Rng(SEED);
    for (let run = 0; run < RUNS; run++) await sequence(rand, run);
  });

  async function sequence(rand: Rng, run: number): Promise<void> {
    const first = serverFlow(sim, { withB: false });
    const second = serverFlow(sim, { id: 'server2', withB: false, config: { baseUrl: otherSpelling(sim.baseUrl) } });
    const credentials = { ...first.credentials, ...second.credentials };
    const rule = {
      id: 'semi',
      source: 'A',
      minSeverity: 'Error',
      steps: [{ mode: 'semi-automatic', answer: 'Retry', delay: DELAY_S }],
    };
    const nodes: Msg[] = [
      ...first.nodes,
      ...second.nodes,
      { id: 'policy', type: 'lh-error-policy', server: 'server', rules: [rule], store: 'keep', wires: [[], [], []] },
      { id: 'answer', type: 'lh-answer-error', server: 'server2', selectedResponse: '', wires: [[]] },
    ];
    await loadWithPage(nodes, credentials);
    await (helper as unknown as { _redNodes: { loadContextsPlugin(): Promise<void> } })._redNodes.loadContextsPlugin();
    await helper.setFlows(nodes, 'full', credentials);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });

    const errors: ModelError[] = [];
    const expected: string[] = [...puts()];
    const trace: string[] = [];
    let n = 0;
    const receive = (msg: Msg): void => helper.getNode('policy').receive(msg);
    const pending = (): ModelError[] => errors.filter((e) => e.state === 'pending');

    const raise = (reuse?: ModelError): void => {
      const severity = rand.pick(['Warning', 'Error', 'Fatal'] as const);
      const id = reuse ? reuse.id : `m${run}-${n++}`;
      if (reuse) reuse.state = 'replaced';
      const title = rand.pick(['Clot detected', 'Door open', 'Liquid level not detected']);
      const record = sim.injectPendingError({
        id,
        title,
        severity,
        responses: ['Retry', 'Abort'],
        reuseId: !!reuse,
      }) as unknown as Msg;
      const e: ModelError = { id, record, severity, state: 'pending' };
      if (RANK[severity] >= RANK.Error) e.deadline = Date.now() + DELAY_S * 1000;
      errors.push(e);
      trace.push(`${reuse ? 'raise again' : 'raise'} ${id} ${severity} "${title}"`);
      receive({ payload: structuredClone(record), source: 'A', event: 'raised' });
    };

    for (let step = 0; step < STEPS; step++) {
      const op = rand.weighted({ raise: 5, again: 2, resolve: 2, person: 2, tick: 6, redeploy: 1, respell: 1, restart: 1 });
      const open = pending();
      if (op === 'raise' || (open.length === 0 && op !== 'tick')) raise();
      else if (op === 'again') raise(rand.pick(open));
      else if (op === 'resolve') {
        const e = rand.pick(open);
        sim.resolvePendingError(e.id);
        e.state = 'resolved';
        trace.push(`resolve ${e.id}`);
        receive({ payload: structuredClone(e.record), source: 'A', event: 'resolved' });
      } else if (op === 'person') {
        const e = rand.pick(open);
        e.state = 'person';
        expected.push(`${e.id}:Abort`);
        trace.push(`person answers ${e.id}`);
        helper.getNode('answer').receive({ payload: structuredClone(e.record), selectedResponse: 'Abort' });
      } else if (op === 'tick') {
        const ms = (5 + rand.below(20)) * 1000;
        trace.push(`${ms / 1000} s pass`);
        // a second at a time: a default's request runs on real I/O, the request timeout on the fake clock
        for (let t = 0; t < ms; t += 1000) {
          await clock.tickAsync(1000);
          for (const e of pending())
            if (e.deadline !== undefined && e.deadline <= Date.now()) {
              e.state = 'policy';
              expected.push(`${e.id}:Retry`);
            }
          await settled(() => puts().length >= expected.length);
        }
      } else if (op === 'redeploy' || op === 'respell') {
        // respell: the lab types the policy's lh-server URL the other way (the same instrument)
        const server = nodes[0];
        if (op === 'respell') server.baseUrl = server.baseUrl === sim.baseUrl ? otherSpelling(sim.baseUrl) : sim.baseUrl;
        trace.push(op === 'respell' ? `redeploy, the lh-server URL now ${String(server.baseUrl)}` : 'redeploy');
        await helper.setFlows(nodes, 'full', credentials);
      } else {
        trace.push('restart');
        restartMemory();
        await helper.setFlows(nodes, 'full', credentials);
      }
      // what reached the instrument: as many answers as the model expects, then none more
      await settled(() => puts().length >= expected.length);
      for (let i = 0; i < 20; i++) await clock.tickAsync(0);
      await settled(() => false, 30);
      try {
        assert.deepEqual([...puts()].sort(), [...expected].sort());
      } catch (err) {
        throw new Error(
          `LH_MODEL_SEED=${SEED}, sequence ${run}, step ${step}:\n${trace.slice(-20).join('\n')}\n${(err as Error).message}`,
        );
      }
    }
    clock.uninstall();
    clock = undefined;
    await helper.unload();
    restartMemory();
  }
});
