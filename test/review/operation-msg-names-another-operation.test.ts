// Review 41, the first hour: an lh-run dropped from the palette has the operation "start" in its dialog. A user wires an
// inject with msg.operation = "abort" (and the protocol of the run to stop) into it: the node ignored msg.operation, as
// it does whenever the dialog names an operation, and started a run, the opposite of what the msg asked. The same
// held for every operation node (a step deleted for msg.operation = "list", settings written for a read, the axes
// homed for heater-status). A msg.operation naming another of the node's operations than the dialog's is now refused
// before anything is sent (Catch, field operation, both names in the message); the dialog still wins over nothing
// else, and a msg.operation that is none of the node's operations (passing on from another node) is left alone.
import assert from 'node:assert/strict';

import { loadNode, useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, nextMessage } from '../support/runtime';

type Msg = Record<string, unknown>;

/** Every operation node and its operations, as its help lists them, with a msg that names what each one needs. */
const NODES: Record<string, { operations: string[]; msg: Msg }> = {
  'lh-run': {
    operations: ['start', 'pause', 'resume', 'abort', 'cleanup', 'status', 'protocols', 'validate'],
    msg: { protocolId: 1, simulate: true },
  },
  'lh-steps': {
    operations: ['create', 'update', 'list', 'get', 'reorder', 'rename', 'enable', 'disable', 'delete'],
    msg: { protocolId: 1, stepId: 1, payload: { stepType: 'PauseStep', name: 'p' } },
  },
  'lh-settings': {
    operations: ['get-software-settings', 'set-software-settings', 'get-policy-settings'],
    msg: { payload: { generateRunReport: false } },
  },
  'lh-service-routine': { operations: ['list', 'get', 'update'], msg: { routineId: 1, payload: {} } },
  'lh-error-log': { operations: ['list', 'get'], msg: { errorId: 'e1' } },
  'lh-register-handler': { operations: ['register', 'unregister', 'check'], msg: { clientKey: 'nodered1' } },
  'lh-run-data': { operations: ['list', 'get', 'report', 'pipetting-csv'], msg: { runId: 'r1' } },
  'lh-protocol': { operations: ['export', 'plan', 'apply', 'validate'], msg: { protocolId: 1 } },
  'lh-instrument': {
    operations: [
      'initialize',
      'heater-start',
      'heater-stop',
      'heater-status',
      'lights-get',
      'snapshot',
      'is-initialized',
      'traces',
    ],
    msg: { temperature: 37 },
  },
};

describe('review 41: a msg.operation that names another operation than the dialog', function () {
  this.timeout(60_000);
  const sim = useInstrument();

  /** Sends msg to a node of `type` whose dialog says `operation`: what came out first, and what the instrument got. */
  async function send(
    type: string,
    operation: string,
    msg: Msg,
    config: Msg = {},
  ): Promise<{ out?: Msg; caught?: Msg; requests: string[] }> {
    await helper.unload();
    const loaded = await loadNode(sim, { id: 'op', type, operation, ...config }, { server: { withB: true } });
    sim.clearRequests();
    const outs = collect(loaded.out);
    const caught = nextMessage(loaded.caught);
    loaded.node.receive(msg);
    let check: NodeJS.Timeout | undefined;
    const first = await Promise.race([
      caught.then((m) => ({ caught: m })),
      new Promise<{ out: Msg }>((resolve) => {
        check = setInterval(() => outs.length > 0 && resolve({ out: outs[0] }), 5);
      }),
    ]).finally(() => clearInterval(check));
    return { ...first, requests: sim.requests.map((r) => `${r.method} ${r.path}`) };
  }

  it('an lh-run at its default (start) refuses msg.operation = "abort": no run is started, nothing is sent', async function () {
    const { out, caught, requests } = await send('lh-run', 'start', { operation: 'abort', protocolId: 1, simulate: true });
    assert.equal(out, undefined, `the node ran: ${JSON.stringify(out?.payload)}`);
    const error = caught?._error as Msg;
    assert.equal(error.field, 'operation');
    assert.match(String(error.message), /msg\.operation is "abort" but this node's operation is "start"/);
    assert.deepEqual(requests, []);
  });

  it('another operation named in another letter case or with spaces ("Abort", " abort ") is refused too; the dialog\'s own so written runs', async function () {
    // a dashboard button labelled "Abort" wired to an lh-run left at start started a run: "Abort" was taken for a msg
    // passing on from another node, though the node would read it as abort under "from msg.operation"
    for (const asked of ['Abort', 'ABORT', ' abort', 'abort ', ' Abort\n']) {
      const { out, caught, requests } = await send('lh-run', 'start', { operation: asked, protocolId: 1, simulate: true });
      const what = `msg.operation ${JSON.stringify(asked)}`;
      assert.equal(out, undefined, `${what}: the node ran: ${JSON.stringify(out?.payload)}`);
      assert.equal((caught?._error as Msg).field, 'operation', what);
      assert.deepEqual(requests, [], `${what}: sent ${requests.join(', ')}`);
    }
    for (const asked of ['Protocols', ' protocols ']) {
      const same = await send('lh-run', 'protocols', { operation: asked });
      assert.equal(same.caught, undefined, `${asked}: ${String((same.caught?._error as Msg | undefined)?.message)}`);
    }
    // a word that is no operation of the node stays a msg passing on
    const other = await send('lh-run', 'protocols', { operation: 'Get-Software-Settings' });
    assert.equal(other.caught, undefined, String((other.caught?._error as Msg | undefined)?.message));
  });

  it('every operation node, seeded pairs (dialog, msg): refused naming both, nothing sent; the same operation runs', async function () {
    const rng = new Rng(41);
    for (const [type, { operations, msg }] of Object.entries(NODES)) {
      for (let i = 0; i < 2; i++) {
        const fixed = rng.pick(operations);
        const asked = rng.pick(operations.filter((o) => o !== fixed));
        const { out, caught, requests } = await send(type, fixed, { ...msg, operation: asked });
        const what = `${type} set to ${fixed}, msg.operation ${asked}`;
        assert.equal(out, undefined, `${what}: the node ran`);
        const error = caught?._error as Msg;
        assert.equal(error.field, 'operation', `${what}: ${String(error.message)}`);
        assert.match(String(error.message), new RegExp(`"${asked}" but this node's operation is "${fixed}"`), what);
        assert.deepEqual(requests, [], `${what}: sent ${requests.join(', ')}`);
        // the dialog's own operation named in the msg is no conflict
        const same = await send(type, fixed, { ...msg, operation: fixed });
        assert.notEqual((same.caught?._error as Msg | undefined)?.field, 'operation', `${type}: ${fixed} named twice`);
      }
    }
  });

  it('an lh-run whose dialog says a real run (or a simulated one) refuses a msg.simulate that says otherwise: nothing sent', async function () {
    // a dialog set to Simulate "no" started a real run, hardware moving, for msg.simulate = true
    for (const [dialog, asked] of [
      ['false', true],
      ['true', false],
    ] as const) {
      const { out, caught, requests } = await send('lh-run', 'start', { protocolId: 1, simulate: asked }, { simulate: dialog });
      const what = `Simulate ${dialog}, msg.simulate ${String(asked)}`;
      assert.equal(out, undefined, `${what}: the node ran`);
      const error = caught?._error as Msg;
      assert.equal(error.field, 'simulate', `${what}: ${String(error.message)}`);
      assert.match(String(error.message), new RegExp(`msg\\.simulate is ${String(asked)} but this node's Simulate is`));
      assert.deepEqual(requests, [], `${what}: sent ${requests.join(', ')}`);
    }
    // what agrees with the dialog is no conflict: the simulated run starts
    const agreed = await send('lh-run', 'start', { protocolId: 1, simulate: true }, { simulate: 'true', stopAtLoading: true });
    assert.equal(agreed.caught, undefined, String((agreed.caught?._error as Msg | undefined)?.message));
    assert.ok(
      agreed.requests.some((r) => r === 'POST /api/v1/protocol-run/create'),
      agreed.requests.join(', '),
    );
  });

  it('a msg.operation that is none of the node operations (passing on from another node) is left alone', async function () {
    const { out, caught } = await send('lh-settings', 'get-software-settings', { operation: 'start' });
    assert.equal(caught, undefined, String((caught?._error as Msg | undefined)?.message));
    assert.equal(out?.statusCode, 200);
  });
});
