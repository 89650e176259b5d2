import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, nextMessage, runtimeSettings, USER } from '../support/runtime';
import {
  activeTimeouts,
  bServerFlow,
  loadContextStores,
  messageWhere,
  pollsDone,
  recordDeliveries,
  statusWhere,
  stopRecording,
} from './lh-error-poll.support';

type Msg = Record<string, unknown>;

describe('lh-error-poll', function () {
  this.timeout(30000);
  const sim = useInstrument({
    afterEach() {
      runtimeSettings({ contextStorage: undefined });
      stopRecording();
      restartMemory();
    },
  });

  function flow(
    poll: Record<string, unknown> = {},
    server = bServerFlow(sim),
  ): {
    nodes: Record<string, unknown>[];
    credentials: Record<string, Record<string, string>>;
  } {
    return {
      nodes: [
        ...server.nodes,
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'A',
          interval: 0.5,
          offlineAfter: 2,
          wires: [['raised'], ['resolved'], ['connection']],
          ...poll,
        },
        { id: 'raised', type: 'helper' },
        { id: 'resolved', type: 'helper' },
        { id: 'connection', type: 'helper' },
      ],
      credentials: server.credentials,
    };
  }

  async function load(poll: Record<string, unknown> = {}, server = bServerFlow(sim)): Promise<void> {
    const f = flow(poll, server);
    await loadFlow(f.nodes, f.credentials);
  }

  it('emits an injected A error once with everything needed to answer it and a notification text', async function () {
    const injected = sim.injectPendingError({
      severity: 'Error',
      title: 'Tip not picked up',
      message: 'Channel 3 lost its tip.',
    });
    await load();
    const msg = await nextMessage(helper.getNode('raised'));
    assert.equal(msg.source, 'A');
    assert.equal(msg.event, 'raised');
    assert.equal(msg.errorId, injected.id);
    assert.equal(msg.groupId, injected.groupId);
    assert.deepEqual((msg.payload as Msg).errorResponses, injected.errorResponses);
    assert.equal((msg.payload as Msg).id, injected.id);
    assert.equal(msg.topic, 'sim: Error Tip not picked up');
    assert.deepEqual(msg.instrument, { name: 'sim', baseUrl: sim.baseUrl, instrumentUrl: sim.instrumentUrl });
    const notification = String(msg.notification);
    assert.match(
      notification,
      /^sim: Error Tip not picked up\nChannel 3 lost its tip\.\nResponses: Retry, Abort, Ignore\nTime: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
    );
    assert.doesNotMatch(JSON.stringify(msg), new RegExp(USER.password));
  });

  it('emits each error exactly once across three redeploys of the node and of the whole flow', async function () {
    const first = sim.injectPendingError({ title: 'first' });
    const raised = recordDeliveries('raised'); // every delivery, also between a deploy and the test's next step
    const f = flow();
    await loadFlow(f.nodes, f.credentials);
    await messageWhere('raised', (m) => m.errorId === first.id);

    let second: string | undefined;
    for (let deploy = 1; deploy <= 3; deploy++) {
      // deploys 1 and 3: the whole flow; deploy 2: only the poll node changed (a "modified nodes" deploy)
      const changed = flow({ name: `watch ${deploy}` });
      await helper.setFlows(changed.nodes, deploy === 2 ? 'nodes' : 'full', changed.credentials);
      const polls = pollsDone(sim, 3);
      if (deploy === 2) {
        const got = messageWhere('raised', (m) => m.errorId !== first.id);
        second = sim.injectPendingError({ title: 'second' }).id;
        await got;
      }
      await polls;
    }
    const ids = raised.map((m) => m.errorId);
    assert.deepEqual(ids, [first.id, second]);
  });

  it('reports an error resolved exactly once when it is no longer pending', async function () {
    const injected = sim.injectPendingError();
    await load();
    const raised = collect(helper.getNode('raised'));
    const resolved = collect(helper.getNode('resolved'));
    await messageWhere('raised', () => true);
    const gotResolved = nextMessage(helper.getNode('resolved'));
    sim.resolvePendingError(injected.id);
    const msg = await gotResolved;
    assert.equal(msg.event, 'resolved');
    assert.equal(msg.errorId, injected.id);
    assert.match(String(msg.topic), /^resolved: sim: Warning/);
    await pollsDone(sim, 2);
    assert.equal(resolved.length, 1);
    assert.equal(raised.length, 1);
  });

  it('reports offline after N failed polls and online when the instrument returns, without emitting an error twice', async function () {
    sim.injectPendingError();
    await load({ offlineAfter: 2 });
    const raised = collect(helper.getNode('raised'));
    const connection = collect(helper.getNode('connection'));
    await messageWhere('raised', () => true);
    const offline = nextMessage(helper.getNode('connection'));
    const failedBefore = sim.requests.length;
    await sim.stop();
    const off = await offline;
    assert.equal((off.payload as Msg).state, 'offline');
    assert.equal((off.payload as Msg).failedPolls, 2);
    assert.equal(off.topic, 'sim is offline');
    assert.equal(failedBefore, sim.requests.length, 'nothing reached the stopped simulator');
    const online = nextMessage(helper.getNode('connection'));
    await sim.start();
    const on = await online;
    assert.equal((on.payload as Msg).state, 'online');
    await pollsDone(sim, 2);
    assert.deepEqual(
      connection.map((m) => (m.payload as Msg).state),
      ['offline', 'online'],
    );
    assert.equal(raised.length, 1);
  });

  it('emits B unhandled errors with their uuid and actions, and filters by minimum severity', async function () {
    sim.injectPendingError({ severity: 'Warning', title: 'ignored warning' });
    const fatal = sim.injectInstrumentError({ severity: 'Fatal', title: 'Gripper collision' });
    sim.injectInstrumentError({ severity: 'Warning', title: 'ignored B warning' });
    const pendingError = sim.injectPendingError({ severity: 'Error', title: 'counted' });
    await load({ source: 'both', minSeverity: 'Error', template: '{{source}}|{{id}}|{{severity}}|{{responses}}' });
    const raised = collect(helper.getNode('raised'));
    await pollsDone(sim, 2);
    assert.equal(raised.length, 2, JSON.stringify(raised.map((m) => m.topic)));
    const b = raised.find((m) => m.source === 'B') as Msg;
    assert.equal(b.uuid, fatal.uuid);
    assert.equal((b.payload as Msg).uuid, fatal.uuid);
    const actions = fatal.actions.map((a) => `${a.id} ${a.description}${a.isDefault ? ' (default)' : ''}`).join(', ');
    assert.equal(b.notification, `B|${fatal.uuid}|Fatal|${actions}`);
    const a = raised.find((m) => m.source === 'A') as Msg;
    assert.equal(a.errorId, pendingError.id);
    assert.equal(a.notification, `A|${pendingError.id}|Error|Retry, Abort, Ignore`);
  });

  it('two poll nodes on the same instrument each emit an error once', async function () {
    sim.injectPendingError();
    const f = flow();
    f.nodes.push(
      { id: 'poll2', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['raised2'], [], []] },
      { id: 'raised2', type: 'helper' },
    );
    await loadFlow(f.nodes, f.credentials);
    const one = collect(helper.getNode('raised'));
    const two = collect(helper.getNode('raised2'));
    await Promise.all([messageWhere('raised', () => true), messageWhere('raised2', () => true)]);
    await pollsDone(sim, 4); // about two more polls of each node (0.5 s apart)
    assert.equal(one.length, 1);
    assert.equal(two.length, 1);
  });

  it('polls at once on an input message, without overlapping a running poll', async function () {
    sim.injectPendingError({ title: 'before' });
    await load({ interval: 60 });
    await messageWhere('raised', () => true); // the first poll was handled; the next one is a minute away
    const injected = sim.injectPendingError({ title: 'after' });
    const raised = nextMessage(helper.getNode('raised'));
    sim.clearRequests();
    const poll = helper.getNode('poll');
    poll.receive({ payload: 'now' });
    poll.receive({ payload: 'and now' });
    poll.receive({ payload: 'and again' });
    assert.equal((await raised).errorId, injected.id);
    const polls = sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors');
    assert.ok(polls.length >= 1 && polls.length <= 2, `${polls.length} polls for 3 triggers`);
  });

  it('survives a Node-RED restart with the persist option (context store)', async function () {
    // on a tab, as in a real flows.json: Node-RED cleans the context of nodes it does not find on a flow
    const onTab = (nodes: Record<string, unknown>[]): Record<string, unknown>[] => [
      { id: 'tab', type: 'tab', label: 'errors' },
      ...nodes.map((n) => (n.type === 'lh-server' || n.type === 'tls-config' ? n : { ...n, z: 'tab' })),
    ];
    // A configured store, as a restart-proof setup has (localfilesystem); with none, Node-RED drops a node's
    // context whenever it stops. The test helper never loads context stores: load them, then deploy again.
    runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
    const f = flow({ persist: true, store: 'keep' });
    f.nodes = onTab(f.nodes);
    await loadFlow(f.nodes, f.credentials);
    await loadContextStores();
    sim.injectPendingError();
    restartMemory();
    await helper.setFlows(f.nodes, 'full', f.credentials);
    await nextMessage(helper.getNode('raised'));
    await pollsDone(sim, 1); // saved with the first poll

    restartMemory(); // what a restart of Node-RED does to module state
    const again = recordDeliveries('raised');
    await helper.setFlows(f.nodes, 'full', f.credentials);
    await pollsDone(sim, 2);
    assert.equal(again.length, 0);
    stopRecording();

    // without persist, a restart forgets (the control case)
    const g = flow({ persist: false, name: 'no persist' });
    g.nodes = onTab(g.nodes);
    restartMemory();
    const fresh = recordDeliveries('raised');
    await helper.setFlows(g.nodes, 'full', g.credentials);
    await pollsDone(sim, 1);
    assert.equal(fresh.length, 1);
  });

  it('does not lose an error whose poll was in flight when the node closed', async function () {
    sim.injectPendingError();
    sim.setFaults({ latencyMs: 400 });
    await load();
    await helper.unload(); // the first poll (login, then the list) is still running
    sim.clearFaults();
    const raised = recordDeliveries('raised');
    await load();
    await pollsDone(sim, 2);
    assert.equal(raised.length, 1);
  });

  it('shows a refused login in its status, does not report offline and does not retry the login', async function () {
    const server = bServerFlow(sim, { credentials: { username: USER.username, password: 'wrong' } });
    await load({ interval: 60 }, server);
    const connection = collect(helper.getNode('connection'));
    const refused = (s: Msg): boolean => s.fill === 'red' && s.text === 'login failed (rejected, 401)';
    await statusWhere('poll', refused);
    for (const payload of ['poll again', 'and again']) {
      const shown = statusWhere('poll', refused);
      helper.getNode('poll').receive({ payload });
      await shown;
    }
    assert.equal(connection.length, 0);
    const logins = sim.requests.filter((r) => r.path === '/api/v1/authenticate' && r.method === 'POST');
    assert.equal(logins.length, 1);
  });

  it('fails clearly when B is chosen but the lh-server node has no instrument URL', async function () {
    // the test helper does not translate (its RED._ returns the key): the text is checked in the catalogue
    await load({ source: 'B' }, bServerFlow(sim, { withB: false }));
    const calls = (helper as unknown as { log(): { args: { level: number; msg: unknown }[][] } }).log().args.map((a) => a[0]);
    const logged = calls.filter((c) => c.level === 20 && String(c.msg) === 'lh-error-poll.errors.noInstrumentUrl');
    assert.equal(logged.length, 1, JSON.stringify(calls));
    const catalogue = require('../../nodes/nodes/lh-error-poll/locales/en-US/lh-error-poll.json') as Record<
      string,
      { errors: Record<string, string> }
    >;
    assert.match(catalogue['lh-error-poll'].errors.noInstrumentUrl, /instrument URL/i);
    assert.equal(sim.requests.length, 0);
  });

  it('leaves no timer behind after it closes', async function () {
    // the simulator's keep-alive sockets hold timers of their own: a restart closes them before each count
    await sim.restart();
    const before = activeTimeouts();
    sim.injectPendingError();
    await load({ source: 'both' });
    await pollsDone(sim, 2);
    await helper.unload();
    await sim.restart();
    assert.ok(activeTimeouts() <= before, `timers before ${before}, after ${activeTimeouts()}`);
  });
});

describe('lh-error-poll timing', function () {
  // the compiled module, as the runtime uses it
  const timing = require('../../nodes/nodes/shared/poll-loop.js') as {
    intervalMs(s: unknown): number;
    backoffMs(base: number, failures: number, grace: number): number;
    withJitter(ms: number, random?: () => number): number;
  };

  it('clamps the interval to 0.5 s and defaults to 5 s', function () {
    assert.equal(timing.intervalMs(0.1), 500);
    assert.equal(timing.intervalMs(''), 5000);
    assert.equal(timing.intervalMs('abc'), 5000);
    assert.equal(timing.intervalMs(2), 2000);
  });

  it('keeps the interval until offline, then doubles it up to 60 s', function () {
    assert.equal(timing.backoffMs(5000, 0, 3), 5000);
    assert.equal(timing.backoffMs(5000, 2, 3), 5000);
    assert.equal(timing.backoffMs(5000, 3, 3), 10000);
    assert.equal(timing.backoffMs(5000, 4, 3), 20000);
    assert.equal(timing.backoffMs(5000, 40, 3), 60000);
    assert.equal(timing.backoffMs(120000, 9, 3), 120000);
  });

  it('adds at most 10 % jitter', function () {
    assert.equal(
      timing.withJitter(1000, () => 0),
      1000,
    );
    assert.equal(
      timing.withJitter(1000, () => 0.999),
      1100,
    );
  });
});
