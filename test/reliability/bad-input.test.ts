/**
 * Bad input, table-driven, across every operation node: each case must fail with a message that names the field
 * or the cause, reach a Catch node, send nothing to the instrument when the input itself is invalid, and leave
 * the node working for the next (valid) msg.
 */
import assert from 'node:assert/strict';
import http from 'http';
import { AddressInfo } from 'net';

import { Simulator } from '../../src/simulator';
import { collect, helper, loadFlow, nextMessage, serverFlow, startSimulator, USER } from '../support/runtime';

type Msg = Record<string, unknown>;

const UUID = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';

interface Case {
  name: string;
  node: string;
  msg: Msg | (() => Msg);
  /** msg.error.field the user sees (validation errors) */
  field?: string;
  message: RegExp;
  /** true: the input is invalid, so nothing may reach the instrument */
  sendsNothing: boolean;
  before?: () => void;
  after?: () => void;
  /** no follow-up: the node is bound to a server that cannot work */
  noFollowUp?: boolean;
}

/** A stand-in for a wrong URL: a web server that answers 200 with whatever `mode` says. */
class OddServer {
  mode: 'html' | 'text' | 'empty' = 'html';
  private server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (this.mode === 'html')
        res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!DOCTYPE html><html><body>Router login</body></html>');
      else if (this.mode === 'text') res.writeHead(200, { 'Content-Type': 'text/plain' }).end('OK then');
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end('');
    });
  });
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  start(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('bad input: every node fails clearly, sends nothing and keeps working', function () {
  this.timeout(60000);
  let sim: Simulator;
  let odd: OddServer;
  let deadPort: number;
  let pending = '';
  let instrumentError = '';

  before(async function () {
    sim = await startSimulator();
    odd = new OddServer();
    await odd.start();
    deadPort = await closedPort();
    const nodes: Msg[] = [
      ...serverFlow(sim, { tlsId: 'tls', timeout: 3000 }).nodes,
      {
        id: 'oddServer',
        type: 'lh-server',
        name: 'odd',
        baseUrl: odd.url,
        instrumentUrl: '',
        clientKey: 'nodered1',
        timeout: 3000,
      },
      {
        id: 'deadServer',
        type: 'lh-server',
        name: 'dead',
        baseUrl: `http://127.0.0.1:${deadPort}`,
        instrumentUrl: '',
        timeout: 3000,
      },
      // interface B without a tls-config: the simulator's self-signed CA is not trusted
      {
        id: 'noTlsServer',
        type: 'lh-server',
        name: 'no CA',
        baseUrl: sim.baseUrl,
        instrumentUrl: sim.instrumentUrl,
        clientKey: 'nodered1',
        timeout: 3000,
      },
      { id: 'steps', type: 'lh-steps', server: 'server', operation: '', wires: [['out']] },
      { id: 'settings', type: 'lh-settings', server: 'server', operation: '', mode: 'msg', wires: [['out']] },
      { id: 'routine', type: 'lh-service-routine', server: 'server', operation: '', wires: [['out']] },
      { id: 'errlog', type: 'lh-error-log', server: 'server', operation: '', limit: '', wires: [['out']] },
      { id: 'register', type: 'lh-register-handler', server: 'server', operation: '', wires: [['out']] },
      { id: 'answer', type: 'lh-answer-error', server: 'server', wires: [['out']] },
      { id: 'recover', type: 'lh-submit-recovery', server: 'server', kind: '', wires: [['out']] },
      { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
      { id: 'oddSettings', type: 'lh-settings', server: 'oddServer', operation: '', wires: [['out']] },
      { id: 'deadSettings', type: 'lh-settings', server: 'deadServer', operation: '', wires: [['out']] },
      { id: 'noTlsRegister', type: 'lh-register-handler', server: 'noTlsServer', operation: '', wires: [['out']] },
      { id: 'orphan', type: 'lh-clear-errors', server: '', wires: [['out']] },
      { id: 'ghost', type: 'lh-settings', server: 'deleted-config-node', operation: 'get-software-settings', wires: [['out']] },
      { id: 'catcher', type: 'catch', wires: [['caught']] },
      { id: 'out', type: 'helper' },
      { id: 'caught', type: 'helper' },
    ];
    await loadFlow(nodes, { server: { ...USER }, noTlsServer: { ...USER } });
    sim.state.handlers.add('nodered1');
  });
  after(async function () {
    await helper.unload();
    await odd.stop();
    await sim.stop();
  });
  beforeEach(function () {
    pending = sim.injectPendingError({ responses: ['Retry', 'Abort'], errorData: [{ id: 'ch1' }] }).id;
    instrumentError = sim.injectInstrumentError().uuid;
  });

  const pendingRecord = (): Msg => JSON.parse(JSON.stringify(sim.state.pendingErrors.find((e) => e.id === pending))) as Msg;

  const VALID: Record<string, () => Msg> = {
    steps: () => ({ operation: 'list', protocolId: 2 }),
    settings: () => ({ operation: 'get-software-settings' }),
    routine: () => ({ operation: 'list' }),
    errlog: () => ({ operation: 'list', limit: 5 }),
    register: () => ({ operation: 'check' }),
    answer: () => ({ errorId: pending, selectedResponse: 'Retry' }),
    recover: () => ({ kind: 'recovery', uuid: instrumentError, selectedActionId: 1 }),
    clear: () => ({}),
  };

  const big = 'x'.repeat(1024 * 1024 + 10);
  const cases: Case[] = [
    // ---- lh-steps: ids, types, step types, sizes
    {
      name: 'protocolId not a number',
      node: 'steps',
      msg: { operation: 'list', protocolId: 'abc' },
      field: 'protocolId',
      message: /protocolId must be a whole number/,
      sendsNothing: true,
    },
    {
      name: 'negative protocolId',
      node: 'steps',
      msg: { operation: 'list', protocolId: -1 },
      field: 'protocolId',
      message: /protocolId must be a whole number from 0/,
      sendsNothing: true,
    },
    {
      name: 'non-integer protocolId',
      node: 'steps',
      msg: { operation: 'list', protocolId: 1.5 },
      field: 'protocolId',
      message: /protocolId .*got 1\.5/,
      sendsNothing: true,
    },
    {
      name: 'protocolId int32 overflow',
      node: 'steps',
      msg: { operation: 'list', protocolId: 2147483648 },
      field: 'protocolId',
      message: /to 2147483647/,
      sendsNothing: true,
    },
    {
      name: 'protocolId NaN',
      node: 'steps',
      msg: { operation: 'list', protocolId: NaN },
      field: 'protocolId',
      message: /protocolId .*got NaN/,
      sendsNothing: true,
    },
    {
      name: 'protocolId ../x',
      node: 'steps',
      msg: { operation: 'list', protocolId: '../x' },
      field: 'protocolId',
      message: /protocolId .*"\.\.\/x"/,
      sendsNothing: true,
    },
    {
      name: 'protocolId 1/2',
      node: 'steps',
      msg: { operation: 'list', protocolId: '1/2' },
      field: 'protocolId',
      message: /protocolId/,
      sendsNothing: true,
    },
    {
      name: 'stepId ../x',
      node: 'steps',
      msg: { operation: 'get', protocolId: 2, stepId: '../x' },
      field: 'stepId',
      message: /stepId must be a whole number/,
      sendsNothing: true,
    },
    {
      name: 'stepId a boolean',
      node: 'steps',
      msg: { operation: 'delete', protocolId: 2, stepId: true },
      field: 'stepId',
      message: /stepId .*got true/,
      sendsNothing: true,
    },
    {
      name: 'unknown step operation',
      node: 'steps',
      msg: { operation: 'explode', protocolId: 2 },
      field: 'operation',
      message: /operation must be one of create, update/,
      sendsNothing: true,
    },
    {
      name: 'unknown step type',
      node: 'steps',
      msg: { operation: 'create', protocolId: 2, payload: { stepType: 'LaserStep', name: 'x' } },
      field: 'payload.stepType',
      message: /payload\.stepType must be one of AddReagentStep/,
      sendsNothing: true,
    },
    {
      name: 'step body not an object',
      node: 'steps',
      msg: { operation: 'create', protocolId: 2, payload: 'PauseStep' },
      field: 'payload',
      message: /payload must be an object/,
      sendsNothing: true,
    },
    {
      name: 'empty step name',
      node: 'steps',
      msg: { operation: 'create', protocolId: 2, payload: { stepType: 'PauseStep', name: ' ' } },
      field: 'payload.name',
      message: /payload\.name must be a non-empty text/,
      sendsNothing: true,
    },
    {
      name: 'negative stepOrder',
      node: 'steps',
      msg: { operation: 'create', protocolId: 2, payload: { stepType: 'PauseStep', name: 'a', stepOrder: -3 } },
      field: 'payload.stepOrder',
      message: /payload\.stepOrder/,
      sendsNothing: true,
    },
    {
      name: 'disabled as text',
      node: 'steps',
      msg: { operation: 'create', protocolId: 2, payload: { stepType: 'PauseStep', name: 'a', disabled: 'yes' } },
      field: 'payload.disabled',
      message: /payload\.disabled must be a boolean/,
      sendsNothing: true,
    },
    {
      name: 'makeNameUnique as text',
      node: 'steps',
      msg: { operation: 'create', protocolId: 2, makeNameUnique: 'yes', payload: { stepType: 'PauseStep', name: 'a' } },
      field: 'makeNameUnique',
      message: /makeNameUnique must be a boolean/,
      sendsNothing: true,
    },
    {
      name: 'body over 1 MiB',
      node: 'steps',
      msg: { operation: 'create', protocolId: 2, payload: { stepType: 'PauseStep', name: 'big', note: big } },
      field: 'payload',
      message: /too large .*limit is 1048576/,
      sendsNothing: true,
    },
    {
      name: 'negative offset',
      node: 'steps',
      msg: { operation: 'list', protocolId: 2, offset: -5 },
      field: 'offset',
      message: /offset must be a whole number from 0/,
      sendsNothing: true,
    },
    {
      name: 'limit 0',
      node: 'steps',
      msg: { operation: 'list', protocolId: 2, limit: 0 },
      field: 'limit',
      message: /limit must be a whole number from 1/,
      sendsNothing: true,
    },
    {
      name: 'includeFullStepData not a boolean',
      node: 'steps',
      msg: { operation: 'list', protocolId: 2, includeFullStepData: 'maybe' },
      field: 'includeFullStepData',
      message: /includeFullStepData must be true or false/,
      sendsNothing: true,
    },
    {
      name: 'empty reorder list',
      node: 'steps',
      msg: { operation: 'reorder', protocolId: 2, payload: [] },
      field: 'payload',
      message: /payload must be a non-empty array/,
      sendsNothing: true,
    },
    {
      name: 'rename to a number',
      node: 'steps',
      msg: { operation: 'rename', protocolId: 2, stepId: 1, payload: 42 },
      field: 'payload',
      message: /payload must be the new name/,
      sendsNothing: true,
    },
    // ---- lh-settings
    {
      name: 'unknown settings operation',
      node: 'settings',
      msg: { operation: 'nuke' },
      field: 'operation',
      message: /operation must be one of get-software-settings/,
      sendsNothing: true,
    },
    {
      name: 'boolean setting as text',
      node: 'settings',
      msg: { operation: 'set-software-settings', payload: { hideKeyboard: 'yes' } },
      field: 'payload.hideKeyboard',
      message: /payload\.hideKeyboard must be a boolean/,
      sendsNothing: true,
    },
    {
      name: 'int32 setting overflow',
      node: 'settings',
      msg: { operation: 'set-software-settings', payload: { defaultAmbientTemperature: 1e12 } },
      field: 'payload.defaultAmbientTemperature',
      message: /payload\.defaultAmbientTemperature must be a whole number/,
      sendsNothing: true,
    },
    {
      name: 'non-integer int32 setting',
      node: 'settings',
      msg: { operation: 'set-software-settings', payload: { defaultAmbientTemperature: 20.5 } },
      field: 'payload.defaultAmbientTemperature',
      message: /got 20\.5/,
      sendsNothing: true,
    },
    {
      name: 'unknown set mode',
      node: 'settings',
      msg: { operation: 'set-software-settings', mode: 'overwrite', payload: { hideKeyboard: true } },
      field: 'mode',
      message: /mode must be one of merge, replace/,
      sendsNothing: true,
    },
    {
      name: 'no setting named',
      node: 'settings',
      msg: { operation: 'set-software-settings', payload: {} },
      field: 'payload',
      message: /payload must name at least one software setting/,
      sendsNothing: true,
    },
    // ---- lh-service-routine
    {
      name: 'routineId 1/2',
      node: 'routine',
      msg: { operation: 'get', routineId: '1/2' },
      field: 'routineId',
      message: /routineId must be a whole number/,
      sendsNothing: true,
    },
    {
      name: 'negative routineId',
      node: 'routine',
      msg: { operation: 'get', routineId: -1 },
      field: 'routineId',
      message: /routineId .*got -1/,
      sendsNothing: true,
    },
    {
      name: 'routine update not an object',
      node: 'routine',
      msg: { operation: 'update', routineId: 1, payload: 'x' },
      field: 'payload',
      message: /payload must be an object/,
      sendsNothing: true,
    },
    {
      name: 'routine isRecommended as text',
      node: 'routine',
      msg: { operation: 'update', routineId: 1, payload: { isRecommended: 'yes' } },
      field: 'payload.isRecommended',
      message: /payload\.isRecommended must be a boolean/,
      sendsNothing: true,
    },
    // ---- lh-error-log
    {
      name: 'errorId ../x',
      node: 'errlog',
      msg: { operation: 'get', errorId: '../x' },
      field: 'errorId',
      message: /errorId must be 1 to 200 letters/,
      sendsNothing: true,
    },
    {
      name: 'errorId too long',
      node: 'errlog',
      msg: { operation: 'get', errorId: 'e'.repeat(300) },
      field: 'errorId',
      message: /errorId must be 1 to 200/,
      sendsNothing: true,
    },
    {
      name: 'errorId missing',
      node: 'errlog',
      msg: { operation: 'get' },
      field: 'errorId',
      message: /errorId is required/,
      sendsNothing: true,
    },
    {
      name: 'limit as words',
      node: 'errlog',
      msg: { operation: 'list', limit: 'ten' },
      field: 'limit',
      message: /limit must be a whole number/,
      sendsNothing: true,
    },
    // ---- lh-register-handler: client keys
    {
      name: 'client key with a space',
      node: 'register',
      msg: { operation: 'register', clientKey: 'node red' },
      field: 'clientKey',
      message: /clientKey must be 1 to 128 letters .* no spaces/,
      sendsNothing: true,
    },
    {
      name: 'client key in unicode',
      node: 'register',
      msg: { operation: 'register', clientKey: 'ключ' },
      field: 'clientKey',
      message: /clientKey must be 1 to 128 letters/,
      sendsNothing: true,
    },
    {
      name: 'client key too long',
      node: 'register',
      msg: { operation: 'register', clientKey: 'k'.repeat(200) },
      field: 'clientKey',
      message: /clientKey must be 1 to 128/,
      sendsNothing: true,
    },
    {
      name: 'client key with path characters',
      node: 'register',
      msg: { operation: 'unregister', clientKey: '../x' },
      field: 'clientKey',
      message: /clientKey .*"\.\.\/x"/,
      sendsNothing: true,
    },
    {
      name: 'client key a number',
      node: 'register',
      msg: { operation: 'register', clientKey: 12 },
      field: 'clientKey',
      message: /clientKey .*got 12/,
      sendsNothing: true,
    },
    {
      name: 'unknown handler operation',
      node: 'register',
      msg: { operation: 'frobnicate' },
      field: 'operation',
      message: /operation must be one of register, unregister, check/,
      sendsNothing: true,
    },
    // ---- lh-answer-error
    {
      name: 'no selected response',
      node: 'answer',
      msg: () => ({ errorId: pending }),
      field: 'selectedResponse',
      message: /selectedResponse is required/,
      sendsNothing: true,
    },
    {
      name: 'errorId 1/2',
      node: 'answer',
      msg: { errorId: '1/2', selectedResponse: 'Retry' },
      field: 'errorId',
      message: /errorId must be 1 to 200 letters/,
      sendsNothing: true,
    },
    {
      name: 'response not offered',
      node: 'answer',
      msg: () => ({ payload: pendingRecord(), selectedResponse: 'Explode' }),
      field: 'selectedResponse',
      message: /selectedResponse must be one of the responses .*Retry, Abort/,
      sendsNothing: true,
    },
    {
      name: 'selected response an object',
      node: 'answer',
      msg: () => ({ payload: pendingRecord(), selectedResponse: { r: 1 } }),
      field: 'selectedResponse',
      message: /selectedResponse must be a non-empty text/,
      sendsNothing: true,
    },
    {
      name: 'errorDataResponses wrong type',
      node: 'answer',
      msg: () => ({ payload: pendingRecord(), selectedResponse: 'Retry', errorDataResponses: 'Retry' }),
      field: 'errorDataResponses',
      message: /errorDataResponses must be an object/,
      sendsNothing: true,
    },
    // ---- lh-submit-recovery
    {
      name: 'malformed uuid',
      node: 'recover',
      msg: { kind: 'recovery', uuid: 'not-a-uuid', selectedActionId: 1 },
      field: 'uuid',
      message: /uuid must be a UUID/,
      sendsNothing: true,
    },
    {
      name: 'uuid that walks the path',
      node: 'recover',
      msg: { kind: 'recovery', uuid: '../../error-handler', selectedActionId: 1 },
      field: 'uuid',
      message: /uuid must be a UUID/,
      sendsNothing: true,
    },
    {
      name: 'selectedActionId overflow',
      node: 'recover',
      msg: { kind: 'recovery', uuid: UUID, selectedActionId: 2147483648 },
      field: 'selectedActionId',
      message: /selectedActionId must be a whole number/,
      sendsNothing: true,
    },
    {
      name: 'selectedActionId as words',
      node: 'recover',
      msg: { kind: 'recovery', uuid: UUID, selectedActionId: 'one' },
      field: 'selectedActionId',
      message: /selectedActionId .*"one"/,
      sendsNothing: true,
    },
    {
      name: 'unknown recovery kind',
      node: 'recover',
      msg: { kind: 'undo', uuid: UUID, selectedActionId: 1 },
      field: 'kind',
      message: /kind must be one of recovery, action/,
      sendsNothing: true,
    },
    {
      name: 'errorHandlingKey with a space',
      node: 'recover',
      msg: { kind: 'recovery', uuid: UUID, selectedActionId: 1, errorHandlingKey: 'bad key' },
      field: 'errorHandlingKey',
      message: /errorHandlingKey must be 1 to 128 letters/,
      sendsNothing: true,
    },
    {
      name: 'selectedActionIsRecovery as text',
      node: 'recover',
      msg: { kind: 'recovery', uuid: UUID, selectedActionId: 1, selectedActionIsRecovery: 'true' },
      field: 'selectedActionIsRecovery',
      message: /selectedActionIsRecovery must be a boolean/,
      sendsNothing: true,
    },
    {
      name: 'date not a date',
      node: 'recover',
      msg: { kind: 'recovery', uuid: UUID, selectedActionId: 1, date: 'yesterday' },
      field: 'date',
      message: /date must be an ISO 8601 date-time/,
      sendsNothing: true,
    },
    {
      name: 'inputs not an array',
      node: 'recover',
      msg: { kind: 'recovery', uuid: UUID, selectedActionId: 2, inputs: 'x' },
      field: 'inputs',
      message: /inputs must be an array/,
      sendsNothing: true,
    },
    // ---- what the server answers
    {
      name: '5xx HTML error page',
      node: 'settings',
      msg: { operation: 'get-software-settings' },
      message: /get-software-settings failed: 503/,
      sendsNothing: false,
      before: () => sim.setFaults({ statusRate: 1, statusCode: 503, htmlErrors: true }),
      after: () => sim.clearFaults(),
    },
    {
      name: '200 with an HTML page (wrong URL)',
      node: 'oddSettings',
      msg: { operation: 'get-software-settings' },
      message: /answered with an HTML page instead of JSON; check the URL/,
      sendsNothing: false,
      before: () => (odd.mode = 'html'),
      noFollowUp: true,
    },
    {
      name: '200 with text that is not JSON',
      node: 'oddSettings',
      msg: { operation: 'get-policy-settings' },
      message: /answered with text that is not JSON/,
      sendsNothing: false,
      before: () => (odd.mode = 'text'),
      noFollowUp: true,
    },
    {
      name: '200 with an empty body where settings were expected',
      node: 'oddSettings',
      msg: { operation: 'get-software-settings' },
      message: /get-software-settings.*(empty|without|no body)/i,
      sendsNothing: false,
      before: () => (odd.mode = 'empty'),
      noFollowUp: true,
    },
    // ---- configuration and network
    {
      name: 'no config node selected',
      node: 'orphan',
      msg: {},
      field: 'server',
      message: /no instrument configured: select an lh-server/,
      sendsNothing: true,
      noFollowUp: true,
    },
    {
      name: 'config node missing (deleted)',
      node: 'ghost',
      msg: {},
      field: 'server',
      message: /no instrument configured/,
      sendsNothing: true,
      noFollowUp: true,
    },
    {
      name: 'unreachable host',
      node: 'deadSettings',
      msg: { operation: 'get-software-settings' },
      message: /cannot reach the preparation service \(A\) .*connection refused/,
      sendsNothing: true,
      noFollowUp: true,
    },
    {
      name: 'untrusted TLS certificate (no CA configured)',
      node: 'noTlsRegister',
      msg: { operation: 'check' },
      message: /TLS certificate .* not trusted.*TLS configuration node/s,
      sendsNothing: false,
      noFollowUp: true,
    },
  ];

  it(`has at least 40 cases (${cases.length})`, function () {
    assert.ok(cases.length >= 40);
    assert.equal(new Set(cases.map((c) => c.name)).size, cases.length);
  });

  for (const c of cases) {
    it(`${c.node}: ${c.name}`, async function () {
      c.before?.();
      sim.clearRequests();
      const out = collect(helper.getNode('out'));
      const caught = nextMessage(helper.getNode('caught'));
      try {
        helper.getNode(c.node).receive(typeof c.msg === 'function' ? c.msg() : { ...c.msg });
        const msg = await caught;
        const error = msg.error as Msg;
        const details = (msg._error ?? {}) as Msg;
        assert.equal((error.source as Msg).id, c.node, 'reported by the node that got the msg');
        assert.match(String(error.message), c.message);
        if (c.field !== undefined) {
          assert.equal(details.field, c.field);
          assert.ok(String(error.message).includes(c.field.split('.').pop() as string), 'the message names the field');
        }
        assert.equal(out.length, 0, 'nothing is sent on');
        if (c.sendsNothing) {
          assert.deepEqual(
            sim.requests.map((r) => `${r.method} ${r.path}`),
            [],
            'nothing reached the instrument',
          );
        } else if (c.node === 'noTlsRegister') {
          assert.equal(sim.requests.filter((r) => r.api === 'B').length, 0, 'no request got through the failed TLS handshake');
        }
      } finally {
        c.after?.();
      }
      if (c.noFollowUp) return;
      const ok = nextMessage(helper.getNode('out'));
      helper.getNode(c.node).receive(VALID[c.node]());
      const next = await ok;
      assert.equal(next.statusCode, 200, `${c.node} works for the next msg`);
    });
  }
});
