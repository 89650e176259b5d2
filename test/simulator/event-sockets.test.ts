import { strict as assert } from 'node:assert';

import type { AxiosResponse } from 'axios';
import { WebSocket } from 'ws';

import { bearer, Harness, JSON_TYPE, startHarness } from './helpers';

type Channel = 'instinctevents' | 'instincterrors';

/** A raw websocket client that records every frame as received (text). */
interface Listener {
  ws: WebSocket;
  frames: string[];
  next(): Promise<string>;
  closed: Promise<void>;
}

function wsUrl(h: Harness, channel: Channel): string {
  return `${h.sim.baseUrl.replace(/^http/, 'ws')}/${channel}`;
}

async function listen(url: string, headers: Record<string, string> = {}): Promise<Listener> {
  const ws = new WebSocket(url, { headers });
  const frames: string[] = [];
  const waiting: ((frame: string) => void)[] = [];
  ws.on('message', (data: Buffer) => {
    const frame = data.toString('utf8');
    const w = waiting.shift();
    if (w) w(frame);
    else frames.push(frame);
  });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    frames,
    closed,
    next: () => {
      const f = frames.shift();
      return f !== undefined ? Promise.resolve(f) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** Unwraps the simulator's nested frame by hand (JSON.parse of each level), as a check of its wire form. */
function decode(frame: string): { Code: string; Description: string; Data: Record<string, unknown> } {
  const outer = JSON.parse(frame) as { Code: string; Description: string; Data: string };
  assert.equal(typeof outer.Data, 'string', 'Data is JSON inside a string');
  return { ...outer, Data: JSON.parse(outer.Data) as Record<string, unknown> };
}

describe('simulator: event websockets', function () {
  let h: Harness;
  const open: Listener[] = [];
  const connect = async (channel: Channel, headers?: Record<string, string>): Promise<Listener> => {
    const l = await listen(wsUrl(h, channel), headers);
    open.push(l);
    return l;
  };

  before(async function () {
    h = await startHarness({ prefix: '/NimbusLite' });
  });
  afterEach(async function () {
    for (const l of open.splice(0)) {
      l.ws.terminate();
      await l.closed;
    }
    h.sim.reset();
  });
  after(async function () {
    await h.close();
  });

  it('serves both websockets under the path prefix, and nothing elsewhere', async function () {
    await connect('instinctevents');
    await connect('instincterrors');
    assert.deepEqual(h.sim.eventSocketInfo.counts, { events: 1, errors: 1 });
    const outside = `${h.sim.controlUrl.replace(/^http/, 'ws')}/instinctevents`;
    await assert.rejects(listen(outside), /Unexpected server response: 404/);
  });

  it('pushes events injected through /sim/events in the nested JSON form', async function () {
    const l = await connect('instinctevents');
    const res = await h.control.post('/events', {
      code: 'TimeRemaining',
      description: '5 min',
      data: { seconds: 300, step: { name: 'Mix' } },
    });
    assert.equal(res.status, 202);
    assert.deepEqual(res.data, { sent: 1 });
    const frame = decode(await l.next());
    assert.equal(frame.Code, 'TimeRemaining');
    assert.equal(frame.Description, '5 min');
    assert.equal(frame.Data.Seconds, 300);
    assert.equal(typeof frame.Data.Step, 'string', 'nested objects are JSON inside strings again');
    assert.deepEqual(JSON.parse(frame.Data.Step as string), { Name: 'Mix' });
  });

  it('pushes an A runtime error raised through /sim on instincterrors, and its resolution when answered', async function () {
    const l = await connect('instincterrors');
    const created = (await h.control.post('/errors', { title: 'Clot detected' })).data as { id: string };
    const raised = decode(await l.next());
    assert.equal(raised.Code, 'RuntimeError');
    assert.equal(raised.Data.Id, created.id);
    assert.equal(raised.Data.Title, 'Clot detected');
    assert.equal(raised.Data.Source, 'Service');
    const token = await h.login();
    const answer = await h.a.put(
      '/api/v1/errors/runtime',
      { id: created.id, selectedResponse: 'Retry' },
      bearer(token, JSON_TYPE),
    );
    assert.equal(answer.status, 204);
    const resolved = decode(await l.next());
    assert.equal(resolved.Code, 'RuntimeErrorResolved');
    assert.deepEqual(resolved.Data, { Id: created.id });
  });

  it('pushes a firmware error only on the socket (not in the error list) and its later resolution', async function () {
    const l = await connect('instincterrors');
    const res = await h.control.post('/firmware-error', { id: 'fw-1', title: 'Pressure fault', responses: ['Retry', 'Abort'] });
    assert.equal(res.status, 201);
    const raised = decode(await l.next());
    assert.equal(raised.Data.Id, 'fw-1');
    assert.equal(raised.Data.Source, 'Firmware');
    const token = await h.login();
    const pending = await h.a.get('/api/v1/errors/check-for-pending-errors', bearer(token));
    assert.deepEqual(pending.data, []);
    assert.equal((await h.control.post('/firmware-error/fw-1/resolve')).status, 204);
    assert.deepEqual(decode(await l.next()).Data, { Id: 'fw-1' });
    assert.equal((await h.control.post('/firmware-error/fw-1/resolve')).status, 404);
  });

  it('answers a firmware error with PUT errors/runtime like an A error: checked, resolution pushed, a second answer 409', async function () {
    const l = await connect('instincterrors');
    await h.control.post('/firmware-error', { id: 'fw-2', responses: ['Retry', 'Abort'] });
    await l.next();
    const token = await h.login();
    const answer = (selectedResponse: string): Promise<AxiosResponse> =>
      h.a.put('/api/v1/errors/runtime', { id: 'fw-2', selectedResponse }, bearer(token, JSON_TYPE));
    assert.equal((await answer('Ignore')).status, 400, 'not offered');
    assert.equal((await answer('Abort')).status, 204);
    assert.deepEqual(decode(await l.next()).Data, { Id: 'fw-2' });
    assert.equal((await answer('Abort')).status, 409);
    assert.equal(h.sim.state.history.length, 0, 'firmware errors never enter the error list');
  });

  it('pushes a message box and closes it with close-view, validating viewId and viewResult', async function () {
    const l = await connect('instinctevents');
    const box = (await h.control.post('/message-box', { title: 'Door open', text: 'Close the door', buttons: ['Ok', 'Cancel'] }))
      .data as { viewId: string };
    assert.match(box.viewId, /^[0-9a-f]{32}$/);
    const frame = decode(await l.next());
    assert.equal(frame.Code, 'messagebox');
    assert.equal(frame.Data.ViewId, box.viewId);
    assert.equal(frame.Data.Title, 'Door open');
    assert.deepEqual(JSON.parse(frame.Data.Buttons as string), ['Ok', 'Cancel']);

    const token = await h.login();
    const close = (body: unknown): Promise<AxiosResponse> =>
      h.a.post('/api/v1/maintenance/close-view', body, bearer(token, JSON_TYPE));
    assert.equal((await close({ viewId: 'ffffffffffffffffffffffffffffffff', viewResult: 'Ok' })).status, 404);
    assert.equal((await close({ viewId: box.viewId, viewResult: 'Maybe' })).status, 400);
    assert.equal((await close({ viewId: box.viewId, viewResult: 'Yes' })).status, 400, 'not a button of this box');
    assert.equal((await close({ viewId: box.viewId, viewResult: 'Cancel', viewInput: 'n/a' })).status, 200);
    assert.equal((await close({ viewId: box.viewId, viewResult: 'Cancel' })).status, 404, 'closed views are gone');
    const views = (await h.control.get('/views')).data as {
      open: unknown[];
      closed: { viewResult: string; viewInput: unknown }[];
    };
    assert.equal(views.open.length, 0);
    assert.deepEqual(
      views.closed.map((c) => [c.viewResult, c.viewInput]),
      [['Cancel', 'n/a']],
    );
  });

  it('records the bearer token offered on the upgrade, and accepts connections without one', async function () {
    await connect('instinctevents', { Authorization: 'Bearer abc.def.ghi' });
    await connect('instincterrors');
    const upgrades = h.sim.eventSocketInfo.upgrades.slice(-2);
    assert.deepEqual(
      upgrades.map((u) => [u.channel, u.authorization]),
      [
        ['events', 'Bearer abc.def.ghi'],
        ['errors', undefined],
      ],
    );
  });

  it('drops every socket through /sim/event-sockets/drop, and on restart', async function () {
    const a = await connect('instinctevents');
    const b = await connect('instincterrors');
    assert.deepEqual((await h.control.post('/event-sockets/drop')).data, { dropped: 2 });
    await Promise.all([a.closed, b.closed]);
    const c = await connect('instinctevents');
    await h.sim.restart();
    await c.closed;
    await connect('instinctevents');
  });
});

describe('simulator: sockets off', function () {
  let h: Harness;
  before(async function () {
    h = await startHarness({ sockets: false });
  });
  after(async function () {
    await h.close();
  });

  it('answers the websocket paths 404, as an instrument without live events', async function () {
    await assert.rejects(listen(wsUrl(h, 'instinctevents')), /Unexpected server response: 404/);
    assert.equal(h.sim.eventSocketInfo.enabled, false);
  });
});
