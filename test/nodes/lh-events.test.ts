import assert from 'node:assert/strict';

import { Simulator } from '../../src/simulator';
import { builtNode, useInstrument } from '../support/node-suite';
import { collect, helper, serverFlow, tlsConfigNode } from '../support/runtime';
import { loadFlowWithChange, setProperty } from './lh-error-poll.support';

type Msg = Record<string, unknown>;
type Emitter = {
  on(event: string, l: (msg: Msg) => void): unknown;
  removeListener(event: string, l: (msg: Msg) => void): unknown;
};

/** The first message in `seen` (collected since the flow loaded) or arriving later that passes `test`. */
function until(id: string, seen: Msg[], test: (msg: Msg) => boolean): Promise<Msg> {
  const found = seen.find(test);
  if (found) return Promise.resolve(found);
  const node = helper.getNode(id) as unknown as Emitter;
  return new Promise((resolve) => {
    const check = (msg: Msg): void => {
      if (!test(msg)) return;
      node.removeListener('input', check);
      resolve(msg);
    };
    node.on('input', check);
  });
}

async function loadEvents(sim: Simulator, config: Msg = {}): Promise<{ events: Msg[]; connection: Msg[] }> {
  const server = serverFlow(sim, { withB: false });
  await helper.load(
    [tlsConfigNode, builtNode('lh-server'), builtNode('lh-events')],
    [
      ...server.nodes,
      { id: 'ev', type: 'lh-events', server: 'server', codes: '', wires: [['out'], ['conn']], ...config },
      { id: 'out', type: 'helper' },
      { id: 'conn', type: 'helper' },
    ],
    server.credentials,
  );
  return { events: collect(helper.getNode('out')), connection: collect(helper.getNode('conn')) };
}

const connected = (msg: Msg): boolean => (msg.payload as Msg).state === 'connected';

describe('lh-events', function () {
  const sim = useInstrument();

  it('sends only the chosen codes (any letter case), with topic, the unwrapped event and the instrument', async function () {
    const seen = await loadEvents(sim, { codes: 'messagebox, Finished' });
    const state = await until('conn', seen.connection, connected);
    assert.equal(state.topic, 'connection');
    assert.equal(state.event, 'connected');
    assert.equal((state.payload as Msg).socket, 'instinctevents');
    assert.ok(Number.isFinite(Date.parse(String((state.payload as Msg).since))), 'since: an ISO time');
    assert.equal((state.instrument as Msg).baseUrl, sim.baseUrl);

    sim.publishEvent('RunStatus', 'Running', { state: 'Running' });
    sim.publishEvent('FINISHED', 'Run finished', { runId: 'r1', result: 'Completed' });
    const box = sim.openMessageBox({ title: 'Door open', text: 'Close the front door', buttons: ['Ok', 'Cancel'] });
    const boxMsg = await until('out', seen.events, (m) => m.topic === 'messagebox');

    assert.deepEqual(
      seen.events.map((m) => m.topic),
      ['finished', 'messagebox'],
      'runstatus is filtered out, the order is kept',
    );
    assert.deepEqual(seen.events[0].payload, {
      code: 'finished',
      description: 'Run finished',
      data: { runId: 'r1', result: 'Completed' },
    });
    assert.deepEqual(boxMsg.payload, {
      code: 'messagebox',
      description: 'Door open',
      data: { viewId: box.viewId, title: 'Door open', message: 'Close the front door', buttons: ['Ok', 'Cancel'] },
    });
    assert.deepEqual(boxMsg.instrument, { name: 'sim', baseUrl: sim.baseUrl, instrumentUrl: '' });
    assert.doesNotMatch(JSON.stringify(boxMsg), /labwire|Bearer/, 'no credentials or token in the msg');
  });

  it('sends every event when no code is chosen, and reports a dropped connection', async function () {
    const seen = await loadEvents(sim);
    await until('conn', seen.connection, connected);
    sim.publishEvent('maintenancedata', '', { step: 1 });
    sim.publishEvent('SomethingNew', 'x', {});
    await until('out', seen.events, (m) => m.topic === 'somethingnew');
    assert.deepEqual(
      seen.events.map((m) => m.topic),
      ['maintenancedata', 'somethingnew'],
    );
    sim.dropEventSockets();
    const lost = await until('conn', seen.connection, (m) => m.event === 'disconnected');
    assert.equal(typeof (lost.payload as Msg).reason, 'string');
    // reconnecting (first attempt after 3 s) is covered with short timings in test/client/events.test.ts
  });

  it('with a change node and lh-dialog: a message box is answered without a function node', async function () {
    const server = serverFlow(sim, { withB: false });
    await loadFlowWithChange(
      [
        ...server.nodes,
        { id: 'ev', type: 'lh-events', server: 'server', codes: 'messagebox', wires: [['rule'], ['conn']] },
        setProperty('rule', 'viewResult', 'Ok', ['dialog']),
        { id: 'dialog', type: 'lh-dialog', server: 'server', viewResult: '', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'conn', type: 'helper' },
      ],
      server.credentials,
    );
    const conn = collect(helper.getNode('conn'));
    const out = collect(helper.getNode('out'));
    await until('conn', conn, connected);
    const box = sim.openMessageBox({ title: 'Tips', text: 'Load tips', buttons: ['Ok'] });
    const answered = await until('out', out, () => true);
    assert.deepEqual(answered.payload, { viewId: box.viewId, viewResult: 'Ok', viewInput: '' });
    assert.deepEqual(
      sim.views.closed.map((c) => [c.viewId, c.viewResult]),
      [[box.viewId, 'Ok']],
    );
  });

  it('leaves the connection when it stops while the lh-server stays: the socket closes with the last listener', async function () {
    const seen = await loadEvents(sim);
    await until('conn', seen.connection, connected);
    const server = helper.getNode('server') as unknown as { client: { events: { state(c: string): string } } };
    await (helper.getNode('ev') as unknown as { close(removed: boolean): Promise<void> }).close(true);
    assert.equal(server.client.events.state('events'), 'idle');
    while (sim.eventSocketInfo.counts.events > 0) await new Promise((resolve) => setImmediate(resolve));
  });

  it('removes its listeners and closes the socket and timers on redeploy: handles back to baseline after 20 redeploys', async function () {
    this.timeout(60000);
    const handles = (): number =>
      process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'Timeout' || r === 'Immediate').length;
    const cycle = async (): Promise<void> => {
      const seen = await loadEvents(sim, { codes: 'messagebox' });
      await until('conn', seen.connection, connected);
      await helper.unload();
      while (sim.eventSocketInfo.counts.events > 0) await new Promise((resolve) => setImmediate(resolve));
    };
    await cycle();
    const baseline = handles();
    for (let i = 0; i < 20; i++) await cycle();
    let now = handles();
    // sockets closed by the client are released by the server side a turn or two later
    for (let turns = 0; now > baseline && turns < 200; turns++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      now = handles();
    }
    assert.ok(
      now <= baseline,
      `${now} handles after 20 redeploys, ${baseline} before: ${JSON.stringify(process.getActiveResourcesInfo())}`,
    );
    assert.equal(sim.eventSocketInfo.counts.events, 0);
  });
});

describe('lh-events on an instrument without event sockets', function () {
  const sim = useInstrument({ simulator: { sockets: false } });

  it('reports unavailable once on its connection output, with the reason', async function () {
    const seen = await loadEvents(sim);
    const msg = await until('conn', seen.connection, (m) => m.event === 'unavailable');
    assert.match(String((msg.payload as Msg).reason), /no instinctevents socket \(HTTP 404\)/);
    assert.equal(seen.events.length, 0);
    assert.equal(seen.connection.length, 1);
  });
});
