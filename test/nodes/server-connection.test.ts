import assert from 'node:assert/strict';
import net from 'node:net';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, USER } from '../support/runtime';
import { until } from '../support/until';
import { bServerFlow, pollsDone, recordDeliveries, statusWhere, stopRecording } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

/** What the tests read of the deployed lh-server: its published connection state. */
interface ServerWithConnection {
  connection?: { subscriberCount: number };
}

type Flow = ReturnType<typeof bServerFlow>;

/** The tab of `label` with the nodes of `server` (an lh-server and its tls-config): every flow of these tests starts so. */
const tabWith = (label: string, server: Flow): Msg[] => [{ id: 'tab', type: 'tab', label }, ...server.nodes];

/** A helper node on the tab, to collect what is wired to it. */
const helperNode = (id: string): Msg => ({ id, type: 'helper', z: 'tab' });

/** An lh-error-poll of interface A every 0.5 s on the server, its connection output (the 3rd) wired to `connection`. */
const errorPoll = (id: string, connection: string, config: Msg = {}): Msg => ({
  id,
  type: 'lh-error-poll',
  z: 'tab',
  server: 'server',
  source: 'A',
  interval: 0.5,
  wires: [[], [], [connection]],
  ...config,
});

/** An lh-run-watch every 0.5 s on the server, no listener, its connection output (the 4th) wired to `connection`. */
const runWatch = (id: string, connection: string, config: Msg = {}): Msg => ({
  id,
  type: 'lh-run-watch',
  z: 'tab',
  server: 'server',
  interval: 0.5,
  listen: false,
  wires: [[], [], [], [connection]],
  ...config,
});

/** An lh-settings node reading the software settings (it polls nothing), its output wired to `wires`. */
const settingsNode = (wires: string[][] = [[]]): Msg => ({
  id: 'settings',
  type: 'lh-settings',
  z: 'tab',
  server: 'server',
  operation: 'get-software-settings',
  wires,
});

/** One lh-server, two watchers of different pace (a fast error poll, a slow run watch) and an lh-settings node (polls nothing). */
function flow(sim: Parameters<typeof bServerFlow>[0], server = bServerFlow(sim), poll: Msg = {}): Flow {
  return {
    nodes: [
      ...tabWith('connection', server),
      errorPoll('poll', 'pollConnection', { offlineAfter: 2, ...poll }),
      runWatch('watch', 'watchConnection', { interval: 20, offlineAfter: 2, wires: [['states'], [], [], ['watchConnection']] }),
      settingsNode(),
      helperNode('pollConnection'),
      helperNode('watchConnection'),
      helperNode('states'),
    ],
    credentials: server.credentials,
  };
}

/** A loopback port nothing listens on (connections to it are refused). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const B_TOKEN = 'b-token-for-the-tests';

const offlineText = (s: Msg): boolean => s.fill === 'red' && /offline$/.test(String(s.text));

describe('the connection state of an lh-server, shared by every node of it (issue 22.3)', function () {
  this.timeout(40000);
  const sim = useInstrument({
    simulator: { instrumentTokens: [B_TOKEN] },
    afterEach() {
      restartMemory();
    },
  });

  /**
   * After the first poll of the deployed flow, the simulator stopped until the error poll's connection output
   * (wired to pollConnection) says offline; returns its msgs, from the offline one on.
   */
  async function pollGoneOffline(): Promise<Msg[]> {
    await pollsDone(sim, 1);
    const connection = collect(helper.getNode('pollConnection'));
    await sim.stop();
    await until(() => connection.length === 1, 'offline', 10000);
    return connection;
  }

  /**
   * Deploys `quick`, an error poll set to offline after 2, and `patient` beside it on one server (its connection
   * output wired to patientConnection), waits for two polls; returns the connection msgs of each from then on.
   */
  async function deployQuickAndPatient(label: string, patientNode: Msg): Promise<{ quick: Msg[]; patient: Msg[] }> {
    const server = bServerFlow(sim);
    const nodes = [
      ...tabWith(label, server),
      errorPoll('quick', 'quickConnection', { offlineAfter: 2 }),
      patientNode,
      helperNode('quickConnection'),
      helperNode('patientConnection'),
    ];
    await loadFlow(nodes, server.credentials);
    await pollsDone(sim, 2);
    return { quick: collect(helper.getNode('quickConnection')), patient: collect(helper.getNode('patientConnection')) };
  }

  it('two watchers of one server go offline and online together, each emitting one msg per change', async function () {
    const f = flow(sim);
    await loadFlow(f.nodes, f.credentials);
    await until(() => sim.requests.some((r) => r.path === '/api/v1/errors/check-for-pending-errors'), 'the first poll');
    await until(() => sim.requests.some((r) => r.path === '/api/v1/protocol-run'), 'the run watch polled');
    const poll = collect(helper.getNode('pollConnection'));
    const watch = collect(helper.getNode('watchConnection'));
    const own = (s: Msg): boolean => s.fill === 'green'; // lh-settings' own status after it read the settings
    const settingsDone = statusWhere('settings', own);
    helper.getNode('settings').receive({});
    await settingsDone;
    const settingsOffline = statusWhere('settings', offlineText);

    await sim.stop();
    // the run watch polls every 20 s: its own polls alone would take 40 s to say offline
    await until(() => poll.length === 1 && watch.length === 1, 'both offline', 10000);
    const [p, w] = [poll[0].payload as Msg, watch[0].payload as Msg];
    assert.deepEqual([p.state, w.state], ['offline', 'offline']);
    assert.equal(p.failedPolls, 2);
    assert.equal(w.failedPolls, 2);
    assert.ok(
      Math.abs(Date.parse(String(p.since)) - Date.parse(String(w.since))) < 1000,
      `${String(p.since)} / ${String(w.since)}`,
    );
    await settingsOffline; // a node that polls nothing shows it too

    const settingsBack = statusWhere('settings', own);
    await sim.start();
    helper.getNode('poll').receive({}); // poll now rather than after the back-off
    await until(() => poll.length === 2 && watch.length === 2, 'both online', 10000);
    assert.deepEqual(
      [poll.map((m) => (m.payload as Msg).state), watch.map((m) => (m.payload as Msg).state)],
      [
        ['offline', 'online'],
        ['offline', 'online'],
      ],
    );
    await settingsBack; // its own status again, as it was before the outage
    // a few more polls: nothing more is said
    const polls = sim.requests.length;
    await until(() => sim.requests.length >= polls + 3, 'three more polls');
    assert.equal(poll.length + watch.length, 4);
  });

  it('a refused login shows on every node of the server, not as offline, and no connection msg is sent', async function () {
    const f = flow(sim, bServerFlow(sim, { credentials: { username: USER.username, password: 'wrong' } }), { interval: 60 });
    const refused = (s: Msg): boolean => s.fill === 'red' && s.text === 'login failed (rejected, 401)';
    await loadFlow(f.nodes, f.credentials); // the first poll's login is an HTTP round trip away
    const shown = Promise.all(['poll', 'watch', 'settings'].map((id) => statusWhere(id, refused)));
    const connection = [...collect(helper.getNode('pollConnection')), ...collect(helper.getNode('watchConnection'))];
    await shown;
    assert.equal(connection.length, 0);
    assert.equal(sim.requests.filter((r) => r.path === '/api/v1/authenticate' && r.method === 'POST').length, 1);
  });

  it('redeploys leave no subscriber behind: the server holds one per deployed node', async function () {
    const f = flow(sim);
    await loadFlow(f.nodes, f.credentials);
    const server = helper.getNode('server') as unknown as ServerWithConnection;
    assert.equal(server.connection?.subscriberCount, 3);
    for (let i = 1; i <= 10; i++) {
      const nodes = f.nodes.map((n) =>
        n.id === 'poll' || n.id === 'watch' || n.id === 'settings' ? { ...n, name: `deploy ${i}` } : n,
      );
      await helper.setFlows(nodes, 'nodes', f.credentials);
      assert.equal(helper.getNode('server'), server, 'only the nodes using the server were redeployed');
      assert.equal(server.connection?.subscriberCount, 3, `after redeploy ${i}`);
    }
    const changed = f.nodes.map((n) => (n.id === 'server' ? { ...n, name: 'sim 2' } : n));
    await helper.setFlows(changed, 'full', f.credentials);
    const next = helper.getNode('server') as unknown as ServerWithConnection;
    assert.notEqual(next, server);
    assert.equal(server.connection, undefined, 'the closed server let its state go');
    assert.equal(next.connection?.subscriberCount, 3);
  });

  it("watchers with offline after 2 and 10 on one server: each sends its msgs by its own setting, both show the server's offline", async function () {
    const { quick, patient } = await deployQuickAndPatient(
      'thresholds',
      errorPoll('patient', 'patientConnection', { offlineAfter: 10 }),
    );
    const patientOffline = statusWhere('patient', offlineText);
    await sim.stop();
    await until(() => quick.length === 1, 'the node set to 2 says offline', 10000);
    assert.equal((quick[0].payload as Msg).state, 'offline');
    assert.equal((quick[0].payload as Msg).failedPolls, 2);
    await patientOffline; // the status is the server's: offline on every node of it
    await sim.start();
    helper.getNode('quick').receive({});
    helper.getNode('patient').receive({});
    await until(() => quick.length === 2, 'the node set to 2 says online', 10000);
    assert.equal((quick[1].payload as Msg).state, 'online');
    await pollsDone(sim, 2);
    // the node set to 10 saw fewer than 10 failed polls: it never said offline, so it has no online to say either
    assert.deepEqual(patient, []);
  });

  it('one slow request of another node timing out is not an outage, even with offline after 1: the polls were answered meanwhile', async function () {
    const server = bServerFlow(sim, { timeout: 1500 });
    const nodes = [
      ...tabWith('slow', server),
      errorPoll('poll', 'pollConnection', { offlineAfter: 1 }),
      { id: 'clear', type: 'lh-clear-errors', z: 'tab', server: 'server', wires: [[]] },
      helperNode('pollConnection'),
    ];
    await loadFlow(nodes, server.credentials);
    await pollsDone(sim, 1);
    const connection = collect(helper.getNode('pollConnection'));
    let shownOffline = false;
    (helper.getNode('poll') as unknown as { on(e: string, l: (c: { args: Msg[] }) => void): void }).on('call:status', (c) => {
      if (offlineText(c.args[0])) shownOffline = true;
    });
    sim.setFaults({ timeoutRate: 1, methods: ['PUT'] }); // the instrument never answers this one request; reads are answered
    const timedOut = statusWhere('clear', (s) => s.fill === 'red' && /timeout/.test(String(s.text)));
    helper.getNode('clear').receive({});
    await timedOut;
    await pollsDone(sim, 2);
    assert.deepEqual(connection, []);
    assert.equal(shownOffline, false);
  });

  it('a watcher redeployed after the outage ended says online at once (it said offline before, the server heard the answer meanwhile)', async function () {
    const server = bServerFlow(sim);
    const poll = errorPoll('poll', 'pollConnection', { offlineAfter: 2 });
    const base = [
      ...tabWith('redeploy', server),
      settingsNode([['settingsOut']]),
      helperNode('pollConnection'),
      helperNode('settingsOut'),
    ];
    await loadFlow([...base, poll], server.credentials);
    const connection = await pollGoneOffline();
    // the user edits the watcher: a moment without a server (its memory stays: the node is not removed)
    await helper.setFlows([...base, { ...poll, server: '' }], 'nodes', server.credentials);
    await sim.start();
    const answered = collect(helper.getNode('settingsOut'));
    helper.getNode('settings').receive({}); // another node of the server gets an answer: the server is online again
    await until(() => answered.length === 1, 'the settings were read');
    await helper.setFlows([...base, poll], 'nodes', server.credentials);
    await until(() => connection.length === 2, 'online');
    assert.deepEqual(
      connection.map((m) => (m.payload as Msg).state),
      ['offline', 'online'],
    );
    await pollsDone(sim, 2);
    assert.equal(connection.length, 2);
  });

  it('an outage with four watchers on one server: they back off together (no poll storm), each says offline once and online once', async function () {
    const server = bServerFlow(sim);
    const ids = ['poll1', 'poll2', 'watch1', 'watch2'];
    const nodes: Msg[] = [
      ...tabWith('storm', server),
      errorPoll('poll1', 'poll1Out'),
      errorPoll('poll2', 'poll2Out', { offlineAfter: 4 }),
      runWatch('watch1', 'watch1Out'),
      runWatch('watch2', 'watch2Out'),
      ...ids.map((id) => helperNode(`${id}Out`)),
    ];
    await loadFlow(nodes, server.credentials);
    await pollsDone(sim, 2);
    const out = Object.fromEntries(ids.map((id) => [id, collect(helper.getNode(`${id}Out`))]));
    const outageMs = 8000;
    sim.setFaults({ resetRate: 1 }); // every request's socket is cut: nothing answers
    const before = sim.requests.length;
    await new Promise((resolve) => setTimeout(resolve, outageMs / 2));
    const firstHalf = sim.requests.length - before;
    await new Promise((resolve) => setTimeout(resolve, outageMs / 2));
    const during = sim.requests.length - before;
    sim.setFaults({});
    for (const id of ids) helper.getNode(id).receive({}); // poll now rather than after the back-off
    await until(() => ids.every((id) => out[id].length === 2), 'every watcher online again', 10000);
    for (const id of ids)
      assert.deepEqual(
        out[id].map((m) => (m.payload as Msg).state),
        ['offline', 'online'],
        id,
      );
    // at the interval, four nodes would send 4 x 8 polls of up to 3 attempts each in the second half of the outage:
    // offline from the first seconds on, each backs off (the delay doubles with each further failure of the server)
    const secondHalf = during - firstHalf;
    assert.ok(secondHalf <= 24, `${firstHalf} then ${secondHalf} requests in the two halves of ${outageMs} ms of outage`);
    await pollsDone(sim, 2);
    for (const id of ids) assert.equal(out[id].length, 2, id);
  });

  it('a refused login on A leaves a B error poll with its own instrument token alone: its status is its own, it says offline when B stops answering', async function () {
    const server = bServerFlow(sim, { credentials: { username: USER.username, password: 'wrong', instrumentToken: B_TOKEN } });
    const nodes = [
      ...tabWith('token', server),
      errorPoll('pollB', 'pollConnection', { source: 'B', offlineAfter: 2 }),
      settingsNode(),
      helperNode('pollConnection'),
    ];
    await loadFlow(nodes, server.credentials);
    await pollsDone(sim, 1, 'B');
    const connection = collect(helper.getNode('pollConnection'));
    const refusedOnA = statusWhere('settings', (st) => st.fill === 'red' && /login failed/.test(String(st.text)));
    helper.getNode('settings').receive({});
    await refusedOnA;
    const own = statusWhere('pollB', (st) => /pending/.test(String(st.text)));
    await pollsDone(sim, 1, 'B');
    await own; // its own status: B answers with the token, the refusal on A is not its
    await sim.stop();
    await until(() => connection.length === 1, 'the B poll says offline', 10000);
    assert.equal((connection[0].payload as Msg).state, 'offline');
    assert.deepEqual((connection[0].payload as Msg).interfaces, ['B']);
    await sim.start(); // for the next tests
  });

  it('a node of interface B alone never shows "offline" for an outage of A; it shows its own status and works', async function () {
    const server = bServerFlow(sim, {
      config: { baseUrl: `http://127.0.0.1:${await deadPort()}` },
      credentials: { ...USER, instrumentToken: B_TOKEN },
    });
    const nodes = [
      ...tabWith('B alone', server),
      { id: 'handler', type: 'lh-register-handler', z: 'tab', server: 'server', operation: 'msg', wires: [['handlerOut']] },
      settingsNode(),
      helperNode('handlerOut'),
    ];
    await loadFlow(nodes, server.credentials);
    const shown: Msg[] = [];
    (helper.getNode('handler') as unknown as { on(e: string, l: (c: { args: Msg[] }) => void): void }).on('call:status', (c) =>
      shown.push(c.args[0]),
    );
    const settingsOffline = statusWhere('settings', offlineText);
    for (let i = 0; i < 3; i++) {
      const failed = statusWhere('settings', (st) => st.fill === 'red' || st.fill === 'yellow');
      helper.getNode('settings').receive({});
      await failed; // one request after the other: three failures in a row on A
    }
    await settingsOffline; // A is offline: the nodes of A say so
    const out = collect(helper.getNode('handlerOut'));
    helper.getNode('handler').receive({ operation: 'check' });
    await until(() => out.length === 1, 'the handler check answered');
    assert.equal(out[0].payload, false);
    assert.deepEqual(shown.filter(offlineText), [], 'never "offline" on the node of B');
    assert.equal(shown.at(-1)?.fill, 'green');
  });

  it('an lh-server redeployed while requests are under way: no crash, the closed state hears nothing more, the new one starts fresh', async function () {
    const f = flow(sim);
    await loadFlow(f.nodes, f.credentials);
    await pollsDone(sim, 1);
    const server = helper.getNode('server') as unknown as { connection?: { view(): { state: string }; subscriberCount: number } };
    const closed = server.connection;
    assert.ok(closed);
    const before = JSON.stringify(closed.view());
    sim.setFaults({ timeoutRate: 1, methods: ['GET'] }); // the next polls are held, under way when the server closes
    const held = sim.requests.length;
    await until(() => sim.requests.length > held, 'a poll under way');
    const changed = f.nodes.map((n) => (n.id === 'server' ? { ...n, name: 'sim 2' } : n));
    await helper.setFlows(changed, 'full', f.credentials);
    sim.clearFaults();
    await pollsDone(sim, 2);
    assert.equal(JSON.stringify(closed.view()), before, 'the cut requests were not counted by the closed state');
    assert.equal(closed.subscriberCount, 0);
    const next = helper.getNode('server') as unknown as { connection?: { view(): { state: string } } };
    assert.equal(next.connection?.view().state, 'online');
  });

  it('redeploys during an outage (the watcher alone, then the server): no second offline, one online when it returns', async function () {
    const server = bServerFlow(sim);
    const poll = errorPoll('poll', 'pollConnection', { offlineAfter: 2 });
    const base = [...tabWith('outage', server), helperNode('pollConnection')];
    await loadFlow([...base, poll], server.credentials);
    const connection = await pollGoneOffline();
    await helper.setFlows([...base, { ...poll, name: 'edited' }], 'nodes', server.credentials);
    const serverNode = base.map((n) => (n.id === 'server' ? { ...n, name: 'sim edited' } : n));
    await helper.setFlows([...serverNode, { ...poll, name: 'edited' }], 'nodes', server.credentials);
    const offlineAgain = statusWhere('poll', offlineText); // the new server's state counted the failures again
    await offlineAgain;
    await sim.start();
    helper.getNode('poll').receive({});
    await until(() => connection.length === 2, 'online', 10000);
    await pollsDone(sim, 2);
    assert.deepEqual(
      connection.map((m) => (m.payload as Msg).state),
      ['offline', 'online'],
    );
  });

  it('a watcher set to offline after 6 beside one set to 2 keeps polling at its interval until its own 6 failures, then says offline', async function () {
    const { quick, patient } = await deployQuickAndPatient(
      'own back-off',
      runWatch('patient', 'patientConnection', { offlineAfter: 6 }),
    );
    await sim.stop();
    const stoppedAt = Date.now();
    await until(() => quick.length === 1, 'the node set to 2 says offline', 30000);
    const quickTook = Date.now() - stoppedAt;
    await until(() => patient.length === 1, 'the node set to 6 says offline', 60000);
    const patientTook = Date.now() - stoppedAt;
    assert.equal((patient[0].payload as Msg).state, 'offline');
    assert.equal((patient[0].payload as Msg).failedPolls, 6);
    // A ratio of two times measured in this run (a busy machine slows both alike), not a wall-clock bound: at its own
    // interval, 6 failed polls take about 3 times as long as the quick node's 2 (about 7 s against 2.3 s); backing
    // off from the server's 2nd failure on (1 + 2 + 4 + 8 s more) they would take over 9 times as long.
    assert.ok(patientTook < 6 * quickTook, `6 failures after ${patientTook} ms, 2 after ${quickTook} ms`);
    await sim.start();
    helper.getNode('quick').receive({});
    helper.getNode('patient').receive({});
    await until(() => quick.length === 2 && patient.length === 2, 'both online', 10000);
  });

  it('a watcher added during an outage says offline once, to nodes deployed with it (nothing is sent while the flow starts)', async function () {
    const server = bServerFlow(sim);
    const base = [
      ...tabWith('added', server),
      errorPoll('poll', 'pollConnection', { offlineAfter: 2 }),
      helperNode('pollConnection'),
    ];
    await loadFlow(base, server.credentials);
    await pollGoneOffline(); // the outage under way, said by the first watcher
    const added = [
      runWatch('added', 'addedConnection', { offlineAfter: 2 }),
      helperNode('addedConnection'), // started after the watcher
    ];
    const delivered = recordDeliveries('addedConnection');
    await helper.setFlows([...base, ...added], 'nodes', server.credentials);
    await until(() => delivered.length === 1, 'the added watcher says offline', 10000);
    assert.equal((delivered[0].payload as Msg).state, 'offline');
    await sim.start();
    helper.getNode('added').receive({});
    await until(() => delivered.length === 2, 'online', 10000);
    await pollsDone(sim, 2);
    assert.deepEqual(
      delivered.map((m) => (m.payload as Msg).state),
      ['offline', 'online'],
    );
    stopRecording();
  });
});
