/**
 * Fault soak (issue 7): flows poll A and B, answer every A error and submit a recovery for every B error while
 * the simulator fails 10 % of requests with 5xx, resets 2 %, holds 1 % past the client timeout, expires tokens
 * every 30 (simulated) seconds and restarts once. A proxy in front of it also drops 1 % of answers after the
 * simulator processed the request. Nothing may be lost silently or sent twice.
 *
 * Short run (in npm test): LH_SOAK_MS unset, about 25 s. Long run: `npm run soak` (LH_SOAK_MS=300000).
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import { certPath, Simulator } from '../../src/simulator/simulator';
import { restartMemory } from '../support/homes';
import { collect, helper, loadFlow, SIMULATOR_CA_FILE, startSimulator } from '../support/runtime';
import { LossyProxy, ProxiedRequest } from './lossy-proxy';

type Msg = Record<string, unknown>;

const SOAK_MS = Number(process.env.LH_SOAK_MS) > 0 ? Number(process.env.LH_SOAK_MS) : 25_000;
const LONG = SOAK_MS >= 120_000;
const POLL_S = 1;
const OFFLINE_AFTER = 3;
const CLIENT_TIMEOUT_MS = 1500;
/** token lifetime 30 s; the short run doubles the simulator's clock (15 s tokens) so that expiries happen in it */
const CLOCK_SPEED = LONG ? 1 : 2;
const INJECT_EVERY_MS = LONG ? 600 : 250;

function idOf(msg: Msg): string {
  return String(msg.source === 'A' ? msg.errorId : msg.uuid);
}

function countBy<T>(items: T[], key: (t: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const it of items) m.set(key(it), (m.get(key(it)) ?? 0) + 1);
  return m;
}

/** Resolves when `done()` holds, re-checked on every message `node` receives; fails after `ms`. */
function until(
  node: { on(e: string, l: () => void): unknown; removeListener(e: string, l: () => void): unknown },
  done: () => boolean,
  ms: number,
  what: () => string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (done()) return resolve();
    const timer = setTimeout(() => {
      node.removeListener('input', check);
      reject(new Error(`timed out after ${ms} ms waiting for ${what()}`));
    }, ms);
    function check(): void {
      if (!done()) return;
      clearTimeout(timer);
      node.removeListener('input', check);
      resolve();
    }
    node.on('input', check);
  });
}

describe(`fault soak (${Math.round(SOAK_MS / 1000)} s)`, function () {
  this.timeout(SOAK_MS + 90_000);
  let sim: Simulator;
  let proxyA: LossyProxy;
  let proxyB: LossyProxy;

  before(async function () {
    sim = await startSimulator({ tokenLifetimeSeconds: 30, policy: { maximumLoginAttempts: 3 } });
    proxyA = new LossyProxy({ target: sim.baseUrl });
    proxyB = new LossyProxy({
      target: sim.instrumentUrl,
      tls: {
        ca: sim.ca,
        key: fs.readFileSync(certPath('server-key.pem'), 'utf8'),
        cert: fs.readFileSync(certPath('server.pem'), 'utf8'),
      },
    });
    await proxyA.start();
    await proxyB.start();
  });
  after(async function () {
    await helper.unload();
    await proxyA.stop();
    await proxyB.stop();
    await sim.stop();
    restartMemory();
  });

  it('raises and resolves every error once, answers or reports every answer and recovery, never sends one twice, and comes back online', async function () {
    sim.state.handlers.add('soak1');
    await sim.restart(0); // the baseline is taken with the simulator in the state the final count finds it
    const baseline = process.getActiveResourcesInfo();
    sim.setFaults({
      statusRate: 0.1,
      statusCode: 503,
      resetRate: 0.02,
      timeoutRate: 0.01,
      timeoutHoldMs: 3000,
      clockSpeed: CLOCK_SPEED,
    });
    proxyA.lossRate = 0.01;
    proxyB.lossRate = 0.01;
    const flow: Msg[] = [
      {
        id: 'server',
        type: 'lh-server',
        name: 'soak',
        baseUrl: proxyA.url,
        instrumentUrl: proxyB.url,
        clientKey: 'soak1',
        tls: 'tls',
        timeout: CLIENT_TIMEOUT_MS,
      },
      { id: 'tls', type: 'tls-config', name: 'sim CA', cert: '', key: '', ca: SIMULATOR_CA_FILE, verifyservercert: true },
      {
        id: 'pollA',
        type: 'lh-error-poll',
        server: 'server',
        source: 'A',
        interval: POLL_S,
        offlineAfter: OFFLINE_AFTER,
        wires: [['answer', 'raised'], ['resolved'], ['connA']],
      },
      {
        id: 'pollB',
        type: 'lh-error-poll',
        server: 'server',
        source: 'B',
        interval: POLL_S,
        offlineAfter: OFFLINE_AFTER,
        wires: [['recover', 'raised'], ['resolved'], ['connB']],
      },
      {
        id: 'answer',
        type: 'lh-answer-error',
        server: 'server',
        selectedResponse: 'Retry',
        selectedResponseType: 'str',
        wires: [['answered']],
      },
      {
        id: 'recover',
        type: 'lh-submit-recovery',
        server: 'server',
        kind: 'recovery',
        selectedActionId: '1',
        selectedActionIdType: 'num',
        wires: [['recovered']],
      },
      { id: 'catcher', type: 'catch', scope: ['answer', 'recover'], wires: [['caught']] },
      ...['raised', 'resolved', 'connA', 'connB', 'answered', 'recovered', 'caught'].map((id) => ({ id, type: 'helper' })),
    ];
    await loadFlow(flow, { server: { username: 'admin', password: 'labwire' } });
    const raised = collect(helper.getNode('raised'));
    const resolved = collect(helper.getNode('resolved'));
    const answered = collect(helper.getNode('answered'));
    const recovered = collect(helper.getNode('recovered'));
    const caught = collect(helper.getNode('caught'));
    const connTimes: { at: number; node: string; event: string }[] = [];
    for (const node of ['connA', 'connB'])
      helper.getNode(node).on('input', (msg: Msg) => connTimes.push({ at: Date.now(), node, event: String(msg.event) }));

    const injectedA: string[] = [];
    const injectedB: string[] = [];
    const started = Date.now();
    const injector = setInterval(() => {
      if (Math.random() < 0.5) injectedA.push(sim.injectPendingError({ severity: 'Error' }).id);
      else injectedB.push(sim.injectInstrumentError().uuid);
    }, INJECT_EVERY_MS);
    const heap: number[] = [process.memoryUsage().heapUsed];
    const sampler = setInterval(() => heap.push(process.memoryUsage().heapUsed), 5000);

    let restartedAt = 0;
    let stoppedAt = 0;
    // Long enough for OFFLINE_AFTER polls to fail including their retries (~0.75 s), short enough that the first poll
    // after the offline report (2 intervals later: the first back-off step) already finds the instrument back.
    const downtimeMs = (OFFLINE_AFTER + 0.9) * POLL_S * 1000;
    /** No request reaches the simulator between this and its listening again (the downtime starts after its stop):
     * a request logged from here on was served after the return, also one that came before restart() resolved
     * (the CI run of 5409c89: the first poll landed in that gap, and the next one was taken as the first). */
    const backAt = (): number => stoppedAt + downtimeMs;
    try {
      // one restart in the middle, long enough for the polls to call the instrument offline
      await new Promise((r) => setTimeout(r, SOAK_MS * 0.4));
      // The promise under test is about an instrument that is back: while the two polls find it again, no random
      // faults (a timed-out first poll would measure the fault, not the return). They resume right after. Switched
      // off before the restart: the first poll can reach the simulator before restart() resolves.
      const faults = sim.faults;
      sim.setFaults({ statusRate: 0, resetRate: 0, timeoutRate: 0 });
      stoppedAt = Date.now();
      await sim.restart(downtimeMs);
      restartedAt = Date.now();
      const back = backAt();
      const bothOnline = (): boolean =>
        ['connA', 'connB'].every((n) => connTimes.some((c) => c.node === n && c.event === 'online' && c.at >= back));
      await Promise.all(
        ['connA', 'connB'].map((n) => until(helper.getNode(n), bothOnline, 10_000, () => 'both polls to report online')),
      ).catch(
        () => undefined, // asserted below, with the measured times
      );
      sim.setFaults(faults);
      await new Promise((r) => setTimeout(r, Math.max(0, SOAK_MS - (Date.now() - started))));
    } finally {
      clearInterval(injector);
      clearInterval(sampler);
    }

    // Calm: no more faults; errors whose answer failed (reported to Catch) are answered on the instrument's screen.
    sim.setFaults({ statusRate: 0, resetRate: 0, timeoutRate: 0 });
    proxyA.lossRate = 0;
    proxyB.lossRate = 0;
    const allIds = (): string[] => [...injectedA, ...injectedB];
    const raisedIds = (): Set<string> => new Set(raised.map(idOf));
    await until(
      helper.getNode('raised'),
      () => allIds().every((id) => raisedIds().has(id)),
      20_000,
      () => `${allIds().filter((id) => !raisedIds().has(id)).length} errors to be raised`,
    );
    const issued = (): number => raised.length;
    const outcomes = (): number => answered.length + recovered.length + caught.length;
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(
        () => reject(new Error(`only ${outcomes()} outcomes for ${issued()} issued answers/recoveries`)),
        20_000,
      );
      const check = (): void => {
        if (outcomes() < issued()) return;
        clearTimeout(deadline);
        for (const id of ['answered', 'recovered', 'caught']) helper.getNode(id).removeListener('input', check);
        resolve();
      };
      for (const id of ['answered', 'recovered', 'caught']) helper.getNode(id).on('input', check);
      check();
    });
    for (const e of sim.state.pendingErrors) sim.resolvePendingError(e.id);
    for (const e of sim.state.instrumentErrors) if (!e.handled) sim.resolveInstrumentError(e.uuid);
    const resolvedIds = (): Set<string> => new Set(resolved.map(idOf));
    await until(
      helper.getNode('resolved'),
      () => allIds().every((id) => resolvedIds().has(id)),
      20_000,
      () => `${allIds().filter((id) => !resolvedIds().has(id)).length} errors to be resolved`,
    );

    // ---- tallies ---------------------------------------------------------------------------------------------
    const caughtOf = (node: string): Msg[] =>
      caught.filter((m) => ((m.error as Msg | undefined)?.source as Msg | undefined)?.id === node);
    const caughtAnswers = caughtOf('answer');
    const caughtRecoveries = caughtOf('recover');
    const answerPuts = (reqs: ProxiedRequest[]): ProxiedRequest[] =>
      reqs.filter((r) => r.method === 'PUT' && r.path.endsWith('/api/v1/errors/runtime'));
    const puts = answerPuts(proxyA.log);
    const putsById = (status: (s: number) => boolean): Map<string, number> =>
      countBy(
        puts.filter((r) => status(r.upstreamStatus)),
        (r) => String((JSON.parse(r.body) as Msg).id),
      );
    const processedAnswers = putsById((s) => s >= 200 && s < 300);
    const conflictAnswers = putsById((s) => s === 409);
    const submissions = proxyB.log.filter((r) => r.method === 'POST' && /\/instrument-errors\/[^/]+\/recovery$/.test(r.path));
    const submissionsById = countBy(submissions, (r) => r.path.split('/').slice(-2)[0]);
    const simRequests = proxyA.log.length + proxyB.log.length;
    const tally = {
      seconds: Math.round((Date.now() - started) / 1000),
      requestsThroughProxies: simRequests,
      upstream5xx: [...proxyA.log, ...proxyB.log].filter((r) => r.upstreamStatus >= 500).length,
      upstreamNoAnswer: [...proxyA.log, ...proxyB.log].filter((r) => r.upstreamStatus === 0).length,
      lostAfterProcessing: [...proxyA.log, ...proxyB.log].filter((r) => r.lost).length,
      logins: sim.state.logins,
      renewals: sim.state.renewals,
      failedLogins: sim.state.failedLogins,
      injectedA: injectedA.length,
      injectedB: injectedB.length,
      raised: raised.length,
      resolved: resolved.length,
      answersOk: answered.length,
      answersReportedFailed: caughtAnswers.length,
      answerRetriesSeen409: [...conflictAnswers.values()].reduce((a, b) => a + b, 0),
      recoveriesOk: recovered.length,
      recoveriesReportedFailed: caughtRecoveries.length,
      recoveriesReportedFailedButArrived: caughtRecoveries.filter(
        (m) => (sim.state.instrumentErrors.find((e) => e.uuid === m.uuid)?.acceptedSubmissions ?? 0) > 0,
      ).length,
      connectionEvents: connTimes.map((c) => `${c.node}:${c.event}@${c.at - restartedAt}ms`).join(','),
      heapMiBStartEnd: [heap[0], heap[heap.length - 1]].map((h) => Math.round(h / 1048576)),
    };
    console.log(`      soak tally: ${JSON.stringify(tally)}`);
    for (const m of caught) console.log(`      reported failed: ${String((m._error as Msg).message)}`);
    if (process.env.LH_SOAK_DEBUG) {
      for (const r of [...proxyA.log, ...proxyB.log]
        .filter((x) => x.method === 'GET' || x.path.includes('auth'))
        .filter((x) => Math.abs(x.at - restartedAt) < 8000)
        .sort((a, b) => a.at - b.at)) {
        console.log(`${r.at - restartedAt} ${r.end - restartedAt} ${r.method} ${r.path} ${r.upstreamStatus}`);
      }
    }

    // every injected error raised exactly once and resolved exactly once
    for (const [id, n] of countBy(raised, idOf)) assert.equal(n, 1, `error ${id} raised ${n} times`);
    for (const [id, n] of countBy(resolved, idOf)) assert.equal(n, 1, `error ${id} resolved ${n} times`);
    assert.equal(raised.length, allIds().length);
    assert.equal(resolved.length, allIds().length);
    assert.ok(injectedA.length > 5 && injectedB.length > 5, 'both interfaces had errors');

    // every issued answer / recovery has exactly one outcome: success or Catch
    const outcomeIds = [
      ...answered.map((m) => String((m.payload as Msg).id)),
      ...recovered.map((m) => String(m.uuid)),
      ...caught.map((m) => idOf(m)),
    ];
    for (const [id, n] of countBy(outcomeIds, (x) => x)) assert.equal(n, 1, `answer/recovery for ${id} had ${n} outcomes`);
    assert.deepEqual(new Set(outcomeIds), new Set(allIds()));
    for (const m of caught) {
      const err = m.error as Msg;
      assert.ok(typeof err.message === 'string' && err.message.length > 0);
    }

    // never processed twice; a success was processed exactly once; a reported failure at most once
    for (const [id, n] of processedAnswers) assert.equal(n, 1, `answer for ${id} processed ${n} times`);
    for (const m of answered) assert.equal(processedAnswers.get(String((m.payload as Msg).id)), 1);
    for (const [id, n] of submissionsById) {
      assert.equal(n, 1, `recovery for ${id} sent ${n} times (never retried)`);
    }
    for (const e of sim.state.instrumentErrors)
      assert.ok(e.acceptedSubmissions <= 1, `${e.uuid} accepted ${e.acceptedSubmissions} times`);
    for (const m of recovered) {
      const e = sim.state.instrumentErrors.find((x) => x.uuid === m.uuid);
      assert.equal(e?.acceptedSubmissions, 1);
      assert.equal(e?.handledBy, 'soak1');
    }
    for (const m of answered) {
      const id = String((m.payload as Msg).id);
      assert.equal(sim.state.history.find((r) => r.id === id)?.handled, true);
    }

    // offline during the restart, online again after it, and polled again within two poll intervals of the
    // instrument's return (the first back-off step): two intervals as this run's polls kept them (the median gap
    // between a node's polls before the restart), so a busy machine, whose timers all fire late, does not fail it,
    // and a longer back-off still does
    const pollPath = { connA: '/api/v1/errors/check-for-pending-errors', connB: '/api/vector/v3/instrument-errors/unhandled' };
    for (const node of ['connA', 'connB'] as const) {
      // said after the stop: from the stop on, not from the return less the planned downtime (a restart that took a
      // busy machine seconds longer put that after the offline report: a start delayed 3.2 s failed it)
      const offline = connTimes.find((c) => c.node === node && c.event === 'offline' && c.at >= stoppedAt);
      assert.ok(offline, `${node}: the restart was reported as offline`);
      const online = connTimes.find((c) => c.node === node && c.event === 'online' && c.at >= backAt());
      assert.ok(online, `${node}: online again after the restart`);
      const all = sim.requests.filter((r) => r.path === pollPath[node]).map((r) => r.time);
      const medianGap = (times: number[]): number => {
        const gaps = times
          .slice(1)
          .map((t, i) => t - times[i])
          .sort((a, b) => a - b);
        return gaps[Math.floor(gaps.length / 2)] ?? 0;
      };
      // the interval as the machine kept it before the stop and after the return (a machine that got busier
      // meanwhile fires every timer later: run 33 of the CI-like runs, 2,063 ms against 2,000)
      const interval = Math.max(
        POLL_S * 1000,
        medianGap(all.filter((t) => t < stoppedAt)),
        medianGap(all.filter((t) => t >= online.at)),
      );
      // the first back-off step (two intervals) when the instrument was down as planned; a busy machine that took
      // longer to restart it let one more poll fail, and the next step (four intervals) is the promise then
      const downFor = restartedAt - stoppedAt;
      const steps = downFor <= downtimeMs + interval / 4 ? 2 : 4;
      // the back-off is what is promised, not how fast a busy machine answers: the first poll the instrument saw after
      // its return (run 1eade92 of the CI-like runs, load 15: online 2,903 ms after the return, its poll on time)
      // Online may come before that poll: any answer from the instrument says it is back (a login, an answer, the
      // errors socket reconnecting); what the back-off promises is the poll (the CI run of 5409c89 failed on
      // "online by a poll", a promise the package never made)
      const firstPoll = all.find((t) => t >= backAt());
      assert.ok(firstPoll !== undefined, `${node}: polled after the return`);
      assert.ok(
        firstPoll - restartedAt <= steps * interval,
        `${node}: polled ${Math.max(0, firstPoll - restartedAt)} ms after the instrument returned (down ${downFor} ms, planned ` +
          `${downtimeMs}: ${steps} intervals, ${steps * interval} ms)`,
      );
    }

    // leaks nothing: after the flow stops, no timer or socket of ours is left (the simulator's held requests and
    // their timers are the instrument's: a restart of the simulator releases them before counting)
    await helper.unload();
    await sim.restart(0);
    const kinds = ['Timeout', 'TCPSocketWrap', 'TLSWrap'];
    const count = (list: string[], k: string): number => list.filter((x) => x === k).length;
    const deadline = Date.now() + 5000;
    let now = process.getActiveResourcesInfo();
    while (kinds.some((k) => count(now, k) > count(baseline, k)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      now = process.getActiveResourcesInfo();
    }
    for (const k of kinds)
      assert.ok(count(now, k) <= count(baseline, k), `${k}: ${count(now, k)} now, ${count(baseline, k)} before the flow`);
  });
});
