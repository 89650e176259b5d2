/**
 * review55: a model-based pass over the first promise: never drop an instrument error, never answer the wrong one,
 * never answer one twice. A seeded run draws, per case, a history a real instrument can produce — errors raised and
 * resolved at the instrument, an id reused after its error was resolved or while it was pending (same or another
 * title and severity), two errors listed under one id, frames ahead of the list (listed after or never), frames of
 * errors that are over, resolution frames while still listed, the socket dropped, the instrument restarted, polls
 * answered 503, cut or held, redeploys, Remember on or off (on: restarts of Node-RED) — and answers from the raised msgs (some of them stale: the error resolved or its id
 * reused under them) through lh-answer-error. Every msg and every request is checked against the model (the
 * simulator's own errors, one per group id):
 *  - each error the instrument listed is raised at most once, and every one pending at the end exactly once;
 *  - nothing raised or resolved that the instrument did not list;
 *  - each raised error that is gone by the end is resolved exactly once (nothing stuck pending), none pending is;
 *  - an answer reaches the instrument only while the error it was decided for is the one (the only one) listed under
 *    its id (or none is), never after this Node-RED's answer to that error was accepted;
 *  - an answer reported "answered" was applied to that very error.
 * A few cases a run (LH_SEED replays a run, LH_CASES draws more).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import type { LoggedRequest, Severity } from '../../src/simulator/types';
import { loadContextStores, recordDeliveries, socketOpen, stopRecording } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow, runtimeSettings, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = Number(process.env.LH_CASES ?? 3);
const STEPS = 12;
// UUIDs, so that a B error may have the id of an A error (A ids are strings of any form)
const IDS = [
  '00000000-0000-4000-8000-000000000001',
  '00000000-0000-4000-8000-000000000002',
  '00000000-0000-4000-8000-000000000003',
];
const TITLES = ['Clot detected', 'Door open'];
const SEVERITIES: Severity[] = ['Warning', 'Error', 'Fatal'];

type Op =
  'inject' | 'resolve' | 'inject-b' | 'resolve-b' | 'answer' | 'frame' | 'fault' | 'drop' | 'restart' | 'redeploy' | 'node-red';

describe('review: a drawn instrument history against the model of raise and answer', function () {
  this.timeout(120000);
  const sim = useInstrument({
    afterEach: () => {
      stopRecording();
      restartMemory();
    },
  });

  it(`raises each error once, resolves it once, answers only the error seen (seed ${SEED}, ${CASES} cases)`, async function () {
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const trail: string[] = [];
      try {
        await runCase(rng, trail);
      } catch (err) {
        console.log(`case ${c} of seed ${SEED}:\n  ${trail.join('\n  ')}`);
        throw err;
      }
      await helper.unload();
      stopRecording();
      restartMemory();
      sim.reset();
    }
  });

  /** The group ids of the errors the simulator lists under `id` now (its model: one group id per error). */
  const pendingUnder = (id: string): string[] => sim.state.pendingErrors.filter((e) => e.id === id).map((e) => e.groupId);

  async function runCase(rng: Rng, trail: string[]): Promise<void> {
    // Remember: the watch's memory in a persistent context store, so that a restart of Node-RED raises nothing again
    const remember = rng.chance(0.5);
    trail.push(`Remember ${remember ? 'on' : 'off'}`);
    // A alone, or A and B (B errors under the ids of A errors too)
    const both = rng.chance(0.5);
    trail.push(both ? 'A and B' : 'A');
    const server = serverFlow(sim, { withB: both });
    const source = both ? 'both' : 'A';
    const poll = { id: 'poll', type: 'lh-error-poll', server: 'server', source, interval: 5, persist: remember, store: 'keep' };
    // on a tab, as in a real flows.json (Node-RED cleans the context of nodes it does not find on a flow)
    const flow: Msg[] = [
      { id: 'tab', type: 'tab', label: 'errors' },
      ...server.nodes,
      ...[
        { ...poll, wires: [['raised'], ['resolved'], []] },
        { id: 'raised', type: 'helper' },
        { id: 'resolved', type: 'helper' },
        { id: 'answer', type: 'lh-answer-error', server: 'server', wires: [['answered']] },
        { id: 'answered', type: 'helper' },
        { id: 'recover', type: 'lh-submit-recovery', server: 'server', wires: [['answered']] },
        { id: 'catcher', type: 'catch', scope: ['answer', 'recover'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ].map((n) => ({ ...n, z: 'tab' })),
    ];
    const raised = recordDeliveries('raised');
    const resolved = recordDeliveries('resolved');
    const answered = recordDeliveries('answered');
    const caught = recordDeliveries('caught');
    const violations: string[] = [];
    /** group ids this Node-RED's answer was accepted for */
    const accepted = new Set<string>();
    /** the error the answer under way was decided for (A: its group id, B: "B:" and its uuid) */
    let answering: string | undefined;
    const stop = sim.onRequest((r: LoggedRequest) => {
      const b = /^\/api\/vector\/v3\/instrument-errors\/([^/]+)\/(recovery|action)$/.exec(r.path);
      if (r.method === 'POST' && b) {
        const key = `B:${b[1]}`;
        if (!sim.state.instrumentErrors.some((e) => e.uuid === b[1] && !e.handled) && accepted.has(key))
          violations.push(`a second answer to B error ${b[1]} after the first was accepted`);
        if (answering !== key) violations.push(`a B answer to ${b[1]} while answering ${answering}`);
        return;
      }
      if (r.method !== 'PUT' || !r.path.endsWith('/errors/runtime')) return;
      if (answering?.startsWith('B:')) violations.push(`an A answer to ${JSON.stringify(r.body)} while answering ${answering}`);
      const body = r.body as { id?: string; groupId?: string };
      const under = pendingUnder(String(body.id));
      if (under.length > 0 && (under.length > 1 || under[0] !== body.groupId))
        violations.push(`an answer for group ${body.groupId} reached id ${body.id} listing ${under.join(', ')}`);
      if (body.groupId !== undefined && accepted.has(body.groupId))
        violations.push(`a second answer to group ${body.groupId} (id ${body.id}) after the first was accepted`);
    });
    try {
      runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
      await loadFlow(flow, server.credentials);
      await loadContextStores();
      restartMemory();
      await helper.setFlows(flow, 'full', server.credentials);
      if (both) sim.state.handlers.add('nodered1');
      await until(() => socketOpen(sim), 'the errors socket open', 10000);
      // a msg polls at once (after the poll under way, if any); polls never overlap, so the second poll's request means
      // the first poll (which began after the step) was handled
      const polls = (): number => sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;
      const settle = async (): Promise<void> => {
        const target = polls() + 2;
        while (polls() < target) {
          const n = polls();
          helper.getNode('poll').receive({});
          await until(() => polls() > n, 'a poll', 10000);
        }
      };

      for (let step = 0; step < STEPS; step++) {
        const op = rng.weighted<Op>({
          inject: 4,
          resolve: 2,
          answer: 3,
          frame: 1.5,
          fault: 1,
          drop: 1,
          restart: 0.5,
          redeploy: 1,
          'node-red': remember ? 1 : 0,
          'inject-b': both ? 2 : 0,
          'resolve-b': both ? 1 : 0,
        });
        if (op === 'inject') {
          const id = rng.pick(IDS);
          const title = rng.pick(TITLES);
          const severity = rng.pick(SEVERITIES);
          const pending = pendingUnder(id).length > 0;
          const used = sim.state.history.some((h) => h.id === id);
          const share = pending && rng.chance(0.2);
          const e = sim.injectPendingError({
            id,
            title,
            severity,
            responses: ['Retry', 'Abort'],
            ...(share ? { shareId: true } : used ? { reuseId: true } : {}),
          });
          trail.push(
            `inject ${id} "${title}" ${severity}${share ? ' beside' : used ? ' reusing' : ''} (${e.groupId.slice(0, 4)})`,
          );
        } else if (op === 'resolve') {
          const ids = IDS.filter((id) => pendingUnder(id).length > 0);
          if (ids.length === 0) continue;
          const id = rng.pick(ids);
          sim.resolvePendingError(id);
          trail.push(`resolve ${id} at the instrument`);
        } else if (op === 'answer') {
          if (raised.length === 0) continue;
          const msg = rng.pick(raised);
          if (msg.source === 'B') {
            const error = msg.payload as { uuid: string; defaultActionId: number };
            const key = `B:${error.uuid}`;
            const open = sim.state.instrumentErrors.some((e) => e.uuid === error.uuid && !e.handled);
            const tag = `answer ${step}`;
            const mine = (m: Msg): boolean => m.tag === tag;
            answering = key;
            helper.getNode('recover').receive({ ...msg, selectedActionId: error.defaultActionId, tag, _msgid: undefined });
            await until(() => answered.some(mine) || caught.some(mine), 'the B answer settled', 10000);
            await settle();
            answering = undefined;
            const outcomes = [
              ...answered.filter(mine).map(() => 'answered'),
              ...caught.filter(mine).map((m) => String(m.outcome)),
            ];
            if (outcomes.length !== 1) violations.push(`${tag}: ${outcomes.length} outcomes (${outcomes.join(', ')})`);
            trail.push(`answer B ${error.uuid.slice(-1)}: ${outcomes.join(', ')}`);
            const handled = sim.state.instrumentErrors.find((e) => e.uuid === error.uuid);
            if (outcomes[0] === 'answered') {
              if (!open || handled?.selectedActionId !== error.defaultActionId)
                violations.push(`"answered" for B ${error.uuid}, which the instrument shows ${JSON.stringify(handled)}`);
              accepted.add(key);
            } else if (open && !accepted.has(key) && Object.keys(sim.faults).length === 0) {
              violations.push(`the B error ${error.uuid}, open, went unanswered: ${outcomes.join(', ')}`);
            }
            continue;
          }
          const payload = msg.payload as { id: string; groupId: string };
          const response = rng.pick(['Retry', 'Abort']);
          const under = pendingUnder(payload.id);
          const alone = under.length === 1 && under[0] === payload.groupId;
          const tag = `answer ${step}`;
          const mine = (m: Msg): boolean => m.tag === tag;
          answering = payload.groupId;
          helper.getNode('answer').receive({ ...msg, selectedResponse: response, tag, _msgid: undefined });
          await until(() => answered.some(mine) || caught.some(mine), 'the answer settled', 10000);
          await settle(); // and no second outcome of it
          answering = undefined;
          const outcomes = [...answered.filter(mine).map(() => 'answered'), ...caught.filter(mine).map((m) => String(m.outcome))];
          if (outcomes.length !== 1) violations.push(`${tag}: ${outcomes.length} outcomes (${outcomes.join(', ')})`);
          const outcome = outcomes[0];
          trail.push(`answer ${payload.id} (${payload.groupId.slice(0, 4)}) ${response}: ${outcome}`);
          const record = sim.state.history.find((h) => h.groupId === payload.groupId);
          if (outcome === 'answered') {
            if (record?.selectedResponse !== response || !alone)
              violations.push(`"answered" for group ${payload.groupId}, which the instrument shows ${JSON.stringify(record)}`);
            accepted.add(payload.groupId);
          } else if (alone && !accepted.has(payload.groupId) && Object.keys(sim.faults).length === 0) {
            violations.push(`the error ${payload.id} (${payload.groupId}) listed alone went unanswered: ${outcome}`);
          }
        } else if (op === 'inject-b') {
          const free = IDS.filter((id) => !sim.state.instrumentErrors.some((e) => e.uuid === id));
          const uuid = free.length > 0 && rng.chance(0.7) ? rng.pick(free) : randomUUID();
          sim.injectInstrumentError({ uuid, title: rng.pick(TITLES), severity: rng.pick(SEVERITIES) });
          trail.push(`inject B ${uuid.slice(-1)}`);
        } else if (op === 'resolve-b') {
          const open = sim.state.instrumentErrors.filter((e) => !e.handled);
          if (open.length === 0) continue;
          const uuid = rng.pick(open).uuid;
          sim.resolveInstrumentError(uuid);
          trail.push(`resolve B ${uuid.slice(-1)} at the instrument`);
        } else if (op === 'frame') {
          const id = rng.pick(IDS);
          const pending = sim.state.pendingErrors.filter((e) => e.id === id);
          const gone = sim.state.history.filter((h) => h.handled);
          if (gone.length > 0 && rng.chance(0.3)) {
            // a frame of an error that is over, arriving late (its record as the list showed it)
            const h = rng.pick(gone);
            const error = { id: h.id, groupId: h.groupId, severity: h.severity, timeStamp: h.date, message: h.message };
            sim.publishEvent('RuntimeError', h.message, { ...error, source: 'Service' }, 'errors');
            trail.push(`frame: ${h.id} (${h.groupId.slice(0, 4)}), over, pushed late`);
          } else if (pending.length > 0 && rng.chance(0.5)) {
            // the resolution pushed ahead of the list (or a stale one): the list still shows the error
            sim.publishEvent('RuntimeErrorResolved', `Error ${id} resolved`, { id }, 'errors');
            trail.push(`frame: ${id} resolved, still listed`);
          } else {
            // an error pushed before the list shows it (time stamp not in the frame), listed just after or never
            const groupId = randomUUID();
            const title = rng.pick(TITLES);
            const severity = rng.pick(SEVERITIES);
            const responses = ['Retry', 'Abort'];
            const error = { id, title, severity, groupId, errorResponses: responses.map((response) => ({ response })) };
            sim.publishEvent('RuntimeError', title, { ...error, source: 'Service' }, 'errors');
            const listed = rng.chance(0.5);
            const used = sim.state.history.some((h) => h.id === id);
            if (listed) sim.injectPendingError({ id, title, severity, groupId, responses, ...(used ? { reuseId: true } : {}) });
            trail.push(
              `frame: ${id} "${title}" raised (${groupId.slice(0, 4)}), ${listed ? 'listed just after' : 'never listed'}`,
            );
          }
        } else if (op === 'node-red') {
          // a restart of Node-RED: nothing of its memory but the context store (the answer ledger is memory: the
          // instrument's list, read before every answer, and its 409 keep a second answer from landing)
          restartMemory();
          accepted.clear();
          await helper.setFlows(flow, 'full', server.credentials);
          trail.push('Node-RED restarted');
        } else if (op === 'fault') {
          const kind = rng.pick(['503', 'reset', 'held'] as const);
          sim.setFaults(
            kind === '503'
              ? { statusRate: 1, methods: ['GET'] }
              : kind === 'reset'
                ? { resetRate: 1, methods: ['GET'] }
                : { timeoutRate: 1, timeoutHoldMs: 200, methods: ['GET'] },
          );
          trail.push(`polls ${kind}`);
          await settle();
          // an error appears while the polls fail: its frame alone cannot raise it (it is a listed error)
          if (rng.chance(0.5)) {
            const id = rng.pick(IDS);
            const used = sim.state.history.some((h) => h.id === id);
            const e = sim.injectPendingError({ id, title: rng.pick(TITLES), ...(used ? { reuseId: true } : {}) });
            trail.push(`inject ${id} during the fault (${e.groupId.slice(0, 4)})`);
          }
          sim.clearFaults();
        } else if (op === 'drop') {
          sim.dropEventSockets();
          trail.push('socket dropped'); // back within ~75 ms, or after a back-off when it drops again soon
          if (rng.chance(0.5)) {
            const id = rng.pick(IDS);
            const used = sim.state.history.some((h) => h.id === id);
            const e = sim.injectPendingError({ id, title: rng.pick(TITLES), ...(used ? { reuseId: true } : {}) });
            trail.push(`inject ${id} while the socket is down (${e.groupId.slice(0, 4)})`);
          }
        } else if (op === 'restart') {
          await sim.restart(100);
          // the socket comes back after its back-off (seconds): the steps go on meanwhile, as the instrument does
          trail.push('instrument restarted');
        } else {
          // a full redeploy: every node stopped and started again (the memory of errors and answers stays)
          await helper.setFlows(flow, 'full', server.credentials);
          trail.push('redeploy');
        }
        await settle();
      }
      sim.clearFaults();
      await settle();
      await settle();
    } finally {
      stop();
    }

    // the model: every error the instrument had, by group id (one per error); pending at the end or gone
    const b = sim.state.instrumentErrors;
    const known = new Set([...sim.state.history.map((h) => h.groupId), ...b.map((e) => `B:${e.uuid}`)]);
    const pendingAtEnd = new Set([
      ...sim.state.pendingErrors.map((e) => e.groupId),
      ...b.filter((e) => !e.handled).map((e) => `B:${e.uuid}`),
    ]);
    const groupOf = (m: Msg): string => {
      const payload = m.payload as { groupId?: unknown; uuid?: unknown };
      return m.source === 'B' ? `B:${String(payload.uuid)}` : String(payload.groupId);
    };
    const count = (list: Msg[], g: string): number => list.filter((m) => groupOf(m) === g && m.redelivered !== true).length;
    for (const m of [...raised, ...resolved])
      if (!known.has(groupOf(m))) violations.push(`a msg about group ${groupOf(m)}, which the instrument never listed`);
    for (const g of known) {
      const up = count(raised, g);
      const down = count(resolved, g);
      if (up > 1) violations.push(`group ${g} raised ${up} times`);
      if (pendingAtEnd.has(g) && up !== 1) violations.push(`group ${g}, pending at the end, raised ${up} times`);
      if (pendingAtEnd.has(g) && down !== 0) violations.push(`group ${g}, pending at the end, resolved ${down} times`);
      if (!pendingAtEnd.has(g) && down !== up) violations.push(`group ${g}, gone, raised ${up} and resolved ${down} times`);
    }
    assert.deepEqual(violations, []);
  }
});
