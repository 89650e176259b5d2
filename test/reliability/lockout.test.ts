/**
 * Lockout safety: with the instrument locking a user out after 3 failed logins, a wrong password costs exactly one
 * login attempt per deploy or per Test connection, however many nodes fire and however long a poll node polls.
 */
import assert from 'node:assert/strict';

import { statusWhere } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('lockout safety', function () {
  this.timeout(30000);
  const sim = useInstrument({
    simulator: { policy: { maximumLoginAttempts: 3 } },
    adminServer: true,
    afterEach: () => restartMemory(),
  });

  const loginAttempts = (): number => sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/authenticate').length;

  function flow(password: string): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    return {
      nodes: [
        ...serverFlow(sim, { tlsId: 'tls', timeout: 3000 }).nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'both', interval: 0.5, wires: [[], [], []] },
        { id: 'steps', type: 'lh-steps', server: 'server', operation: 'list', protocolId: '2', wires: [['out']] },
        { id: 'settings', type: 'lh-settings', server: 'server', operation: 'get-software-settings', wires: [['out']] },
        { id: 'routine', type: 'lh-service-routine', server: 'server', operation: 'list', wires: [['out']] },
        { id: 'errlog', type: 'lh-error-log', server: 'server', operation: 'list', wires: [['out']] },
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'register', type: 'lh-register-handler', server: 'server', operation: 'check', wires: [['out']] },
        {
          id: 'answer',
          type: 'lh-answer-error',
          server: 'server',
          selectedResponse: 'Retry',
          selectedResponseType: 'str',
          wires: [['out']],
        },
        { id: 'recover', type: 'lh-submit-recovery', server: 'server', kind: 'recovery', wires: [['out']] },
        { id: 'catcher', type: 'catch', wires: [['caught']] },
        { id: 'out', type: 'helper' },
        { id: 'caught', type: 'helper' },
      ],
      credentials: { server: { username: 'admin', password } },
    };
  }

  const FIRING = ['steps', 'settings', 'routine', 'errlog', 'clear', 'register', 'answer', 'recover'];

  async function fireEverything(rounds: number): Promise<Msg[]> {
    const caught = collect(helper.getNode('caught'));
    const expected = rounds * FIRING.length;
    const all = new Promise<void>((resolve) => {
      const check = (): void => {
        if (caught.length < expected) return;
        helper.getNode('caught').removeListener('input', check);
        resolve();
      };
      helper.getNode('caught').on('input', check);
    });
    const pending = sim.injectPendingError().id;
    const uuid = sim.injectInstrumentError().uuid;
    for (let i = 0; i < rounds; i++) {
      for (const id of FIRING) {
        const msg: Msg = id === 'answer' ? { errorId: pending } : id === 'recover' ? { uuid, selectedActionId: 1 } : {};
        helper.getNode(id).receive(msg);
      }
    }
    await all;
    return caught;
  }

  it('a wrong password: one login attempt per deploy, across every node type firing and a poll over several intervals', async function () {
    const f = flow('wrong-pw-1');
    await loadFlow(f.nodes, f.credentials);
    const caught = await fireEverything(5);
    // Three more polls, asked for by input msgs: the timer backs off (1 s, 2 s, 4 s, …) and would outlast the test.
    // Every one is held back by the session.
    for (let i = 0; i < 3; i++) {
      const polled = statusWhere('poll', (s) => s.fill === 'red'); // held back: no request, a red status
      helper.getNode('poll').receive({});
      await polled;
    }
    assert.equal(loginAttempts(), 1, 'one attempt for the deploy');
    assert.equal(sim.state.failedLogins, 1);
    for (const m of caught) {
      // answers to one error are one at a time: the others are refused while the first waits for its login
      const refusedWhileAnswering = ['answer', 'recover'].includes(
        String((m.error as Msg).source && ((m.error as Msg).source as Msg).id),
      );
      const expected = refusedWhileAnswering
        ? /login as "admin" was rejected .*not sent again|is being answered/
        : /login as "admin" was rejected .*not sent again/;
      assert.match(String(m.error && (m.error as Msg).message), expected);
      assert.doesNotMatch(JSON.stringify(m), /wrong-pw-1/);
    }

    // a second deploy = a user action: one more attempt, still below the lockout of 3
    await helper.unload();
    const g = flow('wrong-pw-2');
    await loadFlow(g.nodes, g.credentials);
    await fireEverything(3);
    assert.equal(loginAttempts(), 2);

    // the right password after that still works: the package never locked the user out by itself
    await helper.unload();
    const h = flow('labwire');
    await loadFlow(h.nodes, h.credentials);
    const ok = nextMessage(helper.getNode('out'));
    helper.getNode('settings').receive({});
    assert.equal((await ok).statusCode, 200);
    assert.equal(loginAttempts(), 3);
  });

  it('the status says login failed, and Test connection costs exactly one more attempt', async function () {
    const f = flow('wrong-pw-3');
    await loadFlow(f.nodes, f.credentials);
    const status = new Promise<Msg>((resolve) => {
      const node = helper.getNode('settings');
      node.on('call:status', (call: { args: Msg[] }) => {
        if (call.args[0]?.fill === 'red') resolve(call.args[0]);
      });
    });
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('settings').receive({});
    await caught;
    assert.equal((await status).text, 'login failed (rejected, 401)');
    const before = loginAttempts();
    const res = await helper.request().post('/lh-server/test-connection').send({
      id: 'server',
      baseUrl: sim.baseUrl,
      instrumentUrl: sim.instrumentUrl,
      tls: 'tls',
      username: 'admin',
      password: '__PWRD__',
    });
    assert.equal(res.status, 200);
    const report = res.body as { ok: boolean; checks: { name: string; message: string }[] };
    assert.equal(report.ok, false);
    assert.match(report.checks.find((c) => c.name === 'login')?.message ?? '', /rejected/);
    assert.equal(loginAttempts(), before + 1, 'Test connection = one attempt');
    // and the deployed nodes still do not retry on their own
    const again = nextMessage(helper.getNode('caught'));
    helper.getNode('settings').receive({});
    await again;
    assert.equal(loginAttempts(), before + 1);
  });

  it('an expired password points the user to the change-password path, in the status and the error', async function () {
    sim.setUserPasswordExpired('admin', true);
    const f = flow('labwire');
    await loadFlow(f.nodes, f.credentials);
    const red = new Promise<Msg>((resolve) => {
      helper.getNode('steps').on('call:status', (call: { args: Msg[] }) => {
        if (call.args[0]?.fill === 'red') resolve(call.args[0]);
      });
    });
    const caught = collect(helper.getNode('caught'));
    const first = nextMessage(helper.getNode('caught'));
    helper.getNode('steps').receive({});
    helper.getNode('settings').receive({});
    const msg = await first;
    assert.match(
      String((msg.error as Msg).message),
      /password of user "admin" has expired: set a new one with "Change expired password" in the lh-server node/,
    );
    assert.equal((await red).text, 'password expired: change in lh-server');
    if (caught.length < 2) await nextMessage(helper.getNode('caught'));
    assert.equal(loginAttempts(), 1);
  });
});
