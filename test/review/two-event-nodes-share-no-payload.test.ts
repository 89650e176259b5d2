/**
 * Review finding (review64, live events): every listener of a channel got the same event object, so two lh-events
 * nodes of one instrument sent msgs that shared one `msg.payload` (Node-RED copies a msg only for a node's second and
 * further wires, never across nodes). A change or function node in one flow that sets a property of msg.payload (a
 * change node "set msg.payload.data" does so in place) changed the msg of the other flow before it was read: an
 * lh-events (all codes) → change node logging flow made the messagebox flow's lh-dialog fail with "viewId is
 * required" (the data it reads replaced), so the dialog was never answered. The same held for two lh-error-polls of
 * one instrument (the nested objects of a pushed firmware error's record) and lh-run-watch.
 *
 * Now each listener gets its own copy of the event (the first the one read from the frame, the others a structured
 * clone): what one flow does with its msg never reaches another's.
 */
import assert from 'node:assert/strict';

import { InstrumentEvents } from '../../src/client';
import { loadFlowWithChange, setProperty } from '../nodes/lh-error-poll.support';
import { useInstrument } from '../support/node-suite';
import { collect, helper, serverFlow } from '../support/runtime';

type Msg = Record<string, unknown>;

async function waitFor<T>(what: string, get: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = get();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('review: two event nodes of one instrument share no msg.payload', function () {
  this.timeout(20_000);
  const sim = useInstrument();

  it('a flow rewriting msg.payload.data of its event msg does not stop another flow answering the dialog', async function () {
    const server = serverFlow(sim, { withB: false });
    await loadFlowWithChange(
      [
        ...server.nodes,
        // a logging flow, first to listen: it replaces msg.payload.data with a text of its own
        { id: 'log', type: 'lh-events', server: 'server', codes: '', wires: [['fmt'], []] },
        setProperty('fmt', 'payload.data', 'shown in the log', ['logged']),
        { id: 'logged', type: 'helper' },
        // the dialog flow
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
    const logged = collect(helper.getNode('logged'));
    // what lh-dialog reports (node.error: what a Catch node gets)
    const caught: string[] = [];
    (helper.getNode('dialog') as unknown as { on(e: string, f: (call: { args: unknown[] }) => void): void }).on(
      'call:error',
      (call) => caught.push(String(call.args[0])),
    );
    await waitFor('the events socket', () => conn.find((m) => (m.payload as Msg).state === 'connected'));
    const box = sim.openMessageBox({ title: 'Tips', text: 'Load tips', buttons: ['Ok'] });
    await waitFor('the logging flow', () => logged[0]);
    await waitFor('the dialog answered, or an error', () => out[0] ?? caught[0]);
    assert.deepEqual(caught, [], 'lh-dialog reported no error');
    assert.deepEqual(
      sim.views.closed.map((c) => [c.viewId, c.viewResult]),
      [[box.viewId, 'Ok']],
    );
    assert.equal((logged[0].payload as Msg).data, 'shown in the log');
  });

  it('msg.instrument edited by a flow after lh-events is not the next msg’s', async function () {
    const server = serverFlow(sim, { withB: false });
    await loadFlowWithChange(
      [
        ...server.nodes,
        { id: 'ev', type: 'lh-events', server: 'server', codes: 'finished', wires: [['rename', 'seen'], ['conn']] },
        setProperty('rename', 'instrument.name', 'renamed by a flow', []),
        { id: 'seen', type: 'helper' },
        { id: 'conn', type: 'helper' },
      ],
      server.credentials,
    );
    const conn = collect(helper.getNode('conn'));
    const seen = collect(helper.getNode('seen'));
    await waitFor('the events socket', () => conn.find((m) => (m.payload as Msg).state === 'connected'));
    sim.publishEvent('finished', 'Run finished', { runId: 'r1' });
    await waitFor('the first event', () => seen[0]);
    sim.publishEvent('finished', 'Run finished', { runId: 'r2' });
    await waitFor('the second event', () => seen[1]);
    assert.equal((seen[1].instrument as Msg).name, 'sim');
  });

  it('every listener of a channel gets an event of its own, equal to the others (client)', async function () {
    const events = new InstrumentEvents({ baseUrl: sim.baseUrl });
    try {
      const got: unknown[][] = [[], [], []];
      got.forEach((list) => events.onEvents((e) => list.push(e)));
      await waitFor('connected', () => (events.state('events') === 'connected' ? true : undefined));
      sim.publishEvent('finished', 'Run finished', { runId: 'r1', nested: { steps: [1, 2] } });
      await waitFor('three deliveries', () => (got.every((l) => l.length === 1) ? true : undefined));
      const [a, b, c] = got.map((l) => l[0] as { data: { nested: object } });
      assert.deepEqual(b, a);
      assert.deepEqual(c, a);
      assert.notEqual(b, a);
      assert.notEqual(c, b);
      assert.notEqual(b.data.nested, a.data.nested);
    } finally {
      await events.close();
    }
  });
});
