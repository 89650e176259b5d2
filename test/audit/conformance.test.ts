/**
 * Every write operation is audited: each client method that changes the instrument is called against the simulator,
 * and every non-GET request the simulator received must have exactly one intent record before it and one outcome
 * record after it, linked by one id. The simulator's own route table lists the instrument's write endpoints: each
 * must be reached by some client method here, and every method of the client's APIs must be classified as a write
 * (called here) or a read, so a write operation added later cannot skip the audit unnoticed.
 */
import assert from 'assert';
import fs from 'fs';

import {
  AuditAppender,
  AuditLog,
  AuditRecord,
  AuditTrail,
  onAuditRecord,
  readStreamChain,
  RedisAuditLog,
  verifyStreamChain,
  withActor,
} from '../../src/audit';
import {
  DeckApi,
  DialogApi,
  InstrumentApi,
  LiquidHandlerClient,
  MachineApi,
  PrepApi,
  RunsApi,
  UNAUDITED_OPERATIONS,
} from '../../src/client';
import type { Route } from '../../src/simulator/router';
import type { LoggedRequest } from '../../src/simulator/types';
import { useClients } from '../support/client-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';
import { freshStream, tempDir } from './chain-support';

const UUID = '3f2b6c1e-0d4a-4c8e-9a51-2b7d9e0f1a22';
const UUID2 = '4a2b6c1e-0d4a-4c8e-9a51-2b7d9e0f1a33';

type Write = (c: LiquidHandlerClient, sim: ReturnType<typeof useClients>['sim']) => Promise<unknown>;

/** The client's write operations, each called with input its validation accepts (the instrument may still refuse). */
const WRITES: Record<string, Write> = {
  'deck.initialize': (c) => c.deck.initialize(),
  'deck.startTemperatureControl': (c) => c.deck.startTemperatureControl(37),
  'deck.stopTemperatureControl': (c) => c.deck.stopTemperatureControl(),
  'deck.setCustomLighting': (c) => c.deck.setCustomLighting({ red: 10, green: 20, blue: 30, white: 0 }),
  'deck.setAutomaticLighting': (c) => c.deck.setAutomaticLighting(),
  'prep.changeExpiredPassword': (c) => c.prep.changeExpiredPassword('admin', 'labwire', 'a-new-password-77'),
  'prep.setupWizard': (c) => c.prep.setupWizard(),
  'prep.kbaPasswordReset': (c) => c.prep.kbaPasswordReset(),
  'prep.createStep': (c) => c.prep.createStep(1, { stepType: 'PauseStep', name: 'audited pause' }),
  'prep.updateStep': async (c) => {
    const [step] = await c.prep.listSteps(1);
    return c.prep.updateStep(1, { ...step, name: 'renamed by update' });
  },
  'prep.reorderSteps': async (c) => {
    const steps = await c.prep.listSteps(1);
    return c.prep.reorderSteps(1, steps.map((s) => s.id).reverse());
  },
  'prep.renameStep': async (c) => c.prep.renameStep(1, (await c.prep.listSteps(1))[0].id, 'renamed'),
  'prep.setStepDisabled': async (c) => c.prep.setStepDisabled(1, (await c.prep.listSteps(1))[0].id, true),
  'prep.deleteStep': async (c) => c.prep.deleteStep(1, (await c.prep.listSteps(1))[0].id),
  'prep.answerRuntimeError': (c, sim) => {
    const e = sim.injectPendingError();
    return c.prep.answerRuntimeError({
      id: e.id,
      groupId: e.groupId,
      selectedResponse: e.errorResponses[0]?.response ?? 'Continue',
      errorData: [],
    });
  },
  'prep.clearErrors': (c) => c.prep.clearErrors(),
  'prep.setSoftwareSettings': async (c) =>
    c.prep.setSoftwareSettings({ ...(await c.prep.getSoftwareSettings()), hideKeyboard: true }),
  'prep.updateServiceRoutine': async (c) =>
    c.prep.updateServiceRoutine({ ...(await c.prep.listServiceRoutines())[0], enabled: false }),
  'instrument.registerErrorHandler': (c) => c.instrument.registerErrorHandler('auditkey1'),
  'instrument.unregisterErrorHandler': (c) => c.instrument.unregisterErrorHandler('auditkey1'),
  'instrument.submit': async (c, sim) => {
    sim.state.handlers.add('key1');
    sim.injectInstrumentError({ uuid: UUID });
    sim.injectInstrumentError({ uuid: UUID2 });
    const body = (uuid: string) => ({
      date: new Date().toISOString(),
      uuid,
      detailedErrorRecoveries: null,
      inputs: [],
      selectedActionId: 1,
      selectedActionIsRecovery: true,
      errorHandlingKey: 'key1',
    });
    await c.instrument.submit('recovery', body(UUID));
    return c.instrument.submit('action', body(UUID2));
  },
  'dialogs.closeView': (c, sim) => c.dialogs.closeView({ viewId: sim.openMessageBox({}).viewId, viewResult: 'ok' }),
  'runs.createRun': (c) => c.runs.createRun({ protocolId: 1, simulate: true }),
  'runs.loadComplete': (c) => c.runs.loadComplete({ protocolId: 1, simulate: true }),
  'runs.pause': (c) => c.runs.pause(),
  'runs.resume': (c) => c.runs.resume(),
  'runs.abort': (c) => c.runs.abort(),
  'runs.cleanupUnloading': (c) => c.runs.cleanupUnloading(),
  'runs.setSimulationSpeed': (c) => c.runs.setSimulationSpeed(50),
};

/** Methods that only read (GET): they send nothing the audit records. */
const READS = new Set([
  'deck.snapshot',
  'deck.deckScan',
  'deck.isInitialized',
  'deck.isParked',
  'deck.hasTips',
  'deck.temperatureStatus',
  'deck.lighting',
  'deck.traces',
  'prep.checkAuthentication',
  'prep.listSteps',
  'prep.getStep',
  'prep.listErrors',
  'prep.getError',
  'prep.stillTheSameForResend', // a read of the error list before an answer is resent
  'prep.pendingErrors',
  'prep.getSoftwareSettings',
  'prep.getPolicySettings',
  'prep.listServiceRoutines',
  'prep.getServiceRoutine',
  'prep.probe',
  'instrument.isErrorHandlerRegistered',
  'instrument.unhandledErrors',
  'runs.protocolNames',
  'runs.getProtocol',
  'runs.validateProtocol',
  'runs.status',
  'runs.loadInstructions',
  'runs.globalRunState',
  'runs.simulationSpeed',
  'runs.listRunData',
  'runs.getRunData',
  'runs.runReport',
  'runs.pipettingCsv',
  'machine.systemReady',
  'machine.connectionStatus',
  'machine.sensorStatus',
  'machine.info',
  'machine.softwareVersions',
  'machine.identity',
  'machine.startReadiness',
]);

/** The APIs' own helpers (TypeScript-private): every request goes through them, so they are not operations. */
const HELPERS = new Set([
  'deck.send',
  'deck.flag',
  'prep.send',
  'prep.data',
  'prep.readError', // a read of the error's record after a 409 (is it handled?)
  'prep.stillListed', // a read of the error list after a 404 (is the error still pending?)
  'instrument.send',
  'instrument.stillUnhandled', // a read of the unhandled list after a 409 (is it still pending?)
  'runs.send',
  'runs.data',
  'runs.getFile',
  'runs.control',
  'machine.read',
]);

const API_CLASSES = {
  prep: PrepApi,
  instrument: InstrumentApi,
  dialogs: DialogApi,
  runs: RunsApi,
  machine: MachineApi,
  deck: DeckApi,
};

function publicMethods(): string[] {
  return Object.entries(API_CLASSES).flatMap(([name, cls]) =>
    Object.getOwnPropertyNames(cls.prototype)
      .filter((m) => m !== 'constructor' && typeof (cls.prototype as unknown as Record<string, unknown>)[m] === 'function')
      .map((m) => `${name}.${m}`),
  );
}

const ROOTS = { A: '/api/v1', B: '/api/vector/v3' } as const;

function patternRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/\{[^}]+\}/g, '[^/]+')}$`);
}

function isSessionRoute(r: { method: string; pattern: string }): boolean {
  return /\/authenticate(\/renew-token)?$/.test(r.pattern) && r.method !== 'GET';
}

/** Where the suite's chain is kept: a file (the default) or a Redis stream (several Node-REDs). */
interface Store {
  open(instrument: string): AuditAppender;
  cleanup(): Promise<void>;
}

function fileStore(): Store {
  const dir = tempDir();
  return {
    open: (instrument) => new AuditLog({ dir, name: 'conformance', instrument }),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

conformance('audit: every instrument-changing request has an intent and an outcome record', describe, fileStore);

describeWithRedis('audit: every instrument-changing request has an intent and an outcome record (Redis stream)', function () {
  const db = useRedis();
  conformance('with the chain in a Redis stream', describe, () => {
    let keys = freshStream().keys;
    return {
      open: (instrument) => {
        keys = freshStream(instrument).keys;
        return new RedisAuditLog({ redis: db.redis, keys, instrument });
      },
      // everything the suite wrote is one intact chain in the stream
      cleanup: async () => {
        const report = verifyStreamChain(keys.stream, await readStreamChain(db.redis, keys));
        assert.ok(report.ok && report.records > 40, JSON.stringify(report.firstBad ?? report.records));
      },
    };
  });
});

function conformance(title: string, define: Mocha.SuiteFunction, store: () => Store): void {
  define(title, function () {
    const suite = useClients();
    let chain: Store;
    let log: AuditAppender;
    let trail: AuditTrail;
    const records: AuditRecord[] = [];
    let stop: () => void;

    before(function () {
      chain = store();
      log = chain.open(suite.sim.baseUrl);
      trail = new AuditTrail(log, { instrument: suite.sim.baseUrl, fallback: { node: 'server-1' }, secrets: () => ['labwire'] });
      stop = onAuditRecord(() => undefined);
      log.on('record', (r: AuditRecord) => records.push(r));
    });
    after(async function () {
      stop();
      await log.close();
      await chain.cleanup();
    });

    it('every method of the client APIs is classified as a write (audited below) or a read', function () {
      const unclassified = publicMethods().filter((m) => !(m in WRITES) && !READS.has(m) && !HELPERS.has(m));
      assert.deepStrictEqual(unclassified, [], 'new client methods: add them to WRITES (with a call) or READS');
    });

    it('each write method sends its requests only after an intent record and records one outcome per request', async function () {
      const table = suite.sim.routeTable();
      const routes: Route[] = [...table.A, ...table.B];
      const writeRoutes = routes.filter((r) => r.method !== 'GET' && !isSessionRoute(r));
      const covered = new Set<string>();
      for (const [name, call] of Object.entries(WRITES)) {
        // a fresh client and instrument per operation: nothing one left behind changes the next
        suite.sim.reset();
        const c = suite.unmanaged({ audit: trail });
        await c.session.token();
        suite.sim.clearRequests();
        const before = records.length;
        let failure: unknown;
        await withActor({ node: `node-${name}`, flow: 'flow-1' }, () => call(c, suite.sim)).catch(
          (err: unknown) => (failure = err),
        );
        await c.close();
        const sent = suite.sim.requests.filter(
          (r: LoggedRequest) => r.method !== 'GET' && !/\/authenticate(\/renew-token)?$/.test(r.path),
        );
        assert.ok(sent.length > 0, `${name} sent no write request (${String(failure)})`);
        const mine = records.slice(before);
        const intents = mine.filter((r): r is Extract<AuditRecord, { phase: 'intent' }> => r.phase === 'intent');
        const outcomes = mine.filter((r): r is Extract<AuditRecord, { phase: 'outcome' }> => r.phase === 'outcome');
        assert.strictEqual(intents.length, sent.length, `${name}: one intent per request sent`);
        assert.strictEqual(outcomes.length, sent.length, `${name}: one outcome per request sent`);
        sent.forEach((req, i) => {
          const intent = intents[i];
          assert.strictEqual(
            `${intent.what.method} ${ROOTS[intent.what.api]}${intent.what.path}`,
            `${req.method} ${req.path}`,
            name,
          );
          const outcome = outcomes.find((o) => o.id === intent.id);
          assert.ok(outcome, `${name}: the outcome of ${intent.what.operation} is linked to its intent`);
          assert.ok(mine.indexOf(outcome) > mine.indexOf(intent), `${name}: outcome after intent`);
          assert.strictEqual(intent.who.node, `node-${name}`, `${name}: the acting node is named`);
          assert.ok(!UNAUDITED_OPERATIONS.has(intent.what.operation));
          assert.ok(!/labwire|a-new-password-77/.test(JSON.stringify(intent)), `${name}: no password in the record`);
          const route = writeRoutes.find((r) => r.method === req.method && patternRegExp(r.pattern).test(req.path));
          assert.ok(route, `${req.method} ${req.path} is a write route of the simulator`);
          covered.add(`${route.method} ${route.pattern}`);
        });
      }
      const missed = writeRoutes.map((r) => `${r.method} ${r.pattern}`).filter((r) => !covered.has(r));
      assert.deepStrictEqual(missed, [], 'write endpoints of the instrument that no audited client method reached');
    });

    describe('outcomes', function () {
      async function lastOutcome(work: (c: LiquidHandlerClient) => Promise<unknown>, overrides = {}): Promise<AuditRecord> {
        const c = suite.unmanaged({ audit: trail, ...overrides });
        await work(c).catch(() => undefined);
        await c.close();
        const last = records[records.length - 1];
        assert.strictEqual(last.phase, 'outcome');
        return last;
      }

      it('a request that times out is recorded as unknown, never applied', async function () {
        suite.sim.setFaults({ timeoutRate: 1, methods: ['PUT'], timeoutHoldMs: 1500 });
        const out = await lastOutcome((c) => c.prep.clearErrors(), { timeoutMs: 300 });
        assert.strictEqual(out.phase === 'outcome' && out.outcome.result, 'unknown');
      });

      it('a connection reset after sending is unknown too', async function () {
        suite.sim.setFaults({ resetRate: 1, methods: ['PUT'] });
        const out = await lastOutcome((c) => c.prep.clearErrors());
        assert.strictEqual(out.phase === 'outcome' && out.outcome.result, 'unknown');
      });

      it("a refusal is recorded with the instrument's status and reason", async function () {
        const out = await lastOutcome((c) => c.prep.setStepDisabled(1, 987654, true));
        assert.ok(out.phase === 'outcome');
        assert.strictEqual(out.outcome.result, 'refused');
        assert.strictEqual(out.outcome.status, 404);
        assert.ok((out.outcome.reason ?? '').length > 0);
      });

      it('an answer the instrument refuses inside a 200 (success: false) is refused, not applied', async function () {
        const out = await lastOutcome((c) =>
          c.instrument.submit('recovery', {
            date: new Date().toISOString(),
            uuid: UUID,
            detailedErrorRecoveries: null,
            inputs: [],
            selectedActionId: 1,
            selectedActionIsRecovery: true,
            errorHandlingKey: 'nokey',
          }),
        );
        assert.ok(out.phase === 'outcome');
        assert.notStrictEqual(out.outcome.result, 'applied');
      });

      it('a request that could not connect is not-sent', async function () {
        const out = await lastOutcome((c) => c.prep.clearErrors(), { baseUrl: 'http://127.0.0.1:1', credentials: {} });
        assert.strictEqual(out.phase === 'outcome' && out.outcome.result, 'not-sent');
      });

      it('a request still in flight when the client closes gets its outcome (unknown) before close resolves (review)', async function () {
        suite.sim.setFaults({ timeoutRate: 1, methods: ['PUT'], timeoutHoldMs: 5000 });
        const c = suite.unmanaged({ audit: trail, timeoutMs: 20000 });
        await c.session.token();
        const before = records.length;
        const work = c.prep.clearErrors().catch((err: unknown) => err);
        await until(() => records.slice(before).some((r) => r.phase === 'intent'), 'the intent on disk');
        await c.close();
        const mine = records.slice(before);
        assert.deepStrictEqual(
          mine.map((r) => r.phase),
          ['intent', 'outcome'],
        );
        const out = mine[1];
        assert.ok(out.phase === 'outcome' && out.outcome.result !== 'applied', JSON.stringify(out));
        assert.ok((await work) instanceof Error);
      });

      it('a trail that cannot be written stops the request before it is sent', async function () {
        const broken = new AuditTrail(new AuditLog({ dir: '/dev/null/lh-audit', name: 'x', instrument: 'i' }), {
          instrument: 'i',
        });
        const c = suite.unmanaged({ audit: broken });
        await c.session.token();
        suite.sim.clearRequests();
        await assert.rejects(c.prep.clearErrors(), /clear-errors was not sent: its audit record could not be written/);
        await c.close();
        assert.deepStrictEqual(
          suite.sim.requests.filter((r) => r.method !== 'GET' && r.method !== 'DELETE'),
          [],
        );
      });
    });
  });
}
