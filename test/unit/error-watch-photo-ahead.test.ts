/**
 * review12: the deck photo of a pushed listed error starts on the turn after its frame (2633c5e), so that the frame's
 * poll goes out first. What the frame's own turn checked (the node open, this replica the holder when coordinated) can
 * change before that turn: each such change between the frame and its next turn, the photo is not asked, and no photo
 * permit is held. One ErrorWatch on stubs: its client, server, gate and status are fakes.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'events';

import type { InstrumentEvent } from '../../src/client';
import { photoPermits } from '../../src/nodes/deck/snapshot';
import { ErrorWatch, Watcher } from '../../src/nodes/lh-error-poll/error-watch';
import { forgetWatch, watchFor } from '../../src/nodes/lh-error-poll/seen-errors';
import { until } from '../support/until';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Rig {
  watch: ErrorWatch;
  frame(event: InstrumentEvent): void;
  camera(): number;
  polls(): number;
  gate?: { active: boolean };
}

let n = 0;
/** The camera answers held by the rigs (each answers, refused, after its test: no photo permit outlives it). */
const held: ((err: Error) => void)[] = [];
function rig(coordinated: boolean): Rig {
  const id = `review12-photo-${++n}`;
  const instrumentKey = `https://review12-${n}.example|`;
  let frames: ((event: InstrumentEvent) => void) | undefined;
  let camera = 0;
  let polls = 0;
  const client = Object.assign(new EventEmitter(), {
    baseUrl: `https://review12-${n}.example`,
    hasInstrumentInterface: false,
    transport: { isClosed: false }, // the instrument's camera takes its photo through a client still open
    events: {
      onState: () => () => undefined,
      onErrors: (fn: (event: InstrumentEvent) => void) => {
        frames = fn;
        return () => (frames = undefined);
      },
      lastChange: () => ({ channel: 'errors', state: 'connected' }),
    },
    prep: {
      pendingErrors: () => {
        polls++;
        return Promise.resolve([]);
      },
    },
    deck: {
      snapshot: () => {
        camera++;
        // a camera that holds its answer for the test: the photo keeps its permit meanwhile
        return new Promise((_resolve, reject) => held.push(reject));
      },
    },
    answers: { a: { lookup: () => undefined, lookupPast: () => undefined } },
  });
  const gate = coordinated
    ? {
        active: true,
        catchUp: () => Promise.resolve(),
        filter: () => Promise.resolve(),
      }
    : undefined;
  const server = {
    instrumentKey,
    connection: undefined,
    coordinator: gate ? { errorGate: () => gate } : undefined,
    coordination: gate ? { onChange: () => () => undefined, state: { role: 'holder' } } : undefined,
  };
  const noop = (): void => undefined;
  const status = new Proxy({}, { get: () => noop });
  const node = {
    id,
    type: 'lh-error-poll',
    send: noop,
    warn: noop,
    log: noop,
    error: noop,
    on: noop,
    context: () => ({ get: noop, set: noop }),
  };
  const w = {
    node,
    status,
    client,
    server,
    instrument: { name: 'i', baseUrl: client.baseUrl, instrumentUrl: '' },
    watch: watchFor(instrumentKey, id),
    sources: ['A'],
    config: { interval: 60, source: 'A', snapshot: true, listen: true, persist: false },
  } as unknown as Watcher;
  const RED = { settings: {}, _: (key: string) => key } as unknown as ConstructorParameters<typeof ErrorWatch>[0];
  const watch = new ErrorWatch(RED, w);
  return {
    watch,
    frame: (event) => {
      if (!frames) throw new Error('not listening');
      frames(event);
    },
    camera: () => camera,
    polls: () => polls,
    gate,
  };
}

/** A listed (service) error pushed: the frame that asks for a photo ahead of its poll. */
function pushed(i: number): InstrumentEvent {
  return {
    code: 'ErrorRaised',
    description: 'an error',
    data: { id: `e-${i}`, title: `Arm collision ${i}`, message: 'channel 1', source: 'service' },
  } as unknown as InstrumentEvent;
}

describe('error watch: what changes between a pushed frame and its photo turn (review12)', function () {
  this.timeout(30000);
  const made: Rig[] = [];
  afterEach(function () {
    for (const r of made.splice(0)) r.watch.close(true, () => undefined);
    for (const answer of held.splice(0)) answer(new Error('the test is over'));
  });

  async function started(coordinated: boolean): Promise<Rig> {
    const r = rig(coordinated);
    made.push(r);
    await until(() => r.polls() >= 1, 'the first poll', 20000);
    for (let i = 0; i < 5; i++) await turn();
    return r;
  }

  it('control: nothing changes, the photo is asked on the next turn', async function () {
    const r = await started(false);
    r.frame(pushed(0));
    assert.equal(r.camera(), 0, 'not on the frame’s own turn');
    await turn();
    await turn();
    assert.equal(r.camera(), 1, 'the photo asked beside the poll');
  });

  const between: { name: string; coordinated: boolean; change(r: Rig): void }[] = [
    { name: 'the node closed (a redeploy, a stop)', coordinated: false, change: (r) => r.watch.close(false, () => undefined) },
    { name: 'the node deleted', coordinated: true, change: (r) => r.watch.close(true, () => undefined) },
    {
      name: 'the lease went (this replica a standby now)',
      coordinated: true,
      change: (r) => {
        if (r.gate) r.gate.active = false;
      },
    },
  ];
  for (const c of between) {
    it(`${c.name} between the frame and its next turn: no photo asked, no photo permit held`, async function () {
      const r = await started(c.coordinated);
      const permits = photoPermits.inFlight;
      r.frame(pushed(1));
      c.change(r);
      for (let i = 0; i < 5; i++) await turn();
      assert.equal(r.camera(), 0, 'the camera was asked for a node that no longer reports the error');
      assert.equal(photoPermits.inFlight, permits, 'a photo permit held by a photo nobody sends');
    });
  }

  after(function () {
    for (let i = 1; i <= n; i++) forgetWatch(`https://review12-${i}.example|`, `review12-photo-${i}`);
  });
});
