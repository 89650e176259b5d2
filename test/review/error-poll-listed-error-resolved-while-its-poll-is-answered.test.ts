/**
 * Review 101 (issue 31's frames that ask for no poll), in a real Node-RED runtime on the simulator: a listed error
 * pushed under the id of an open firmware error, its poll's list read, then the listed error resolved on the
 * instrument before that poll's answer is in. The resolution frame settles the firmware error under the id; it must
 * still poll (the listed error's poll may have read the list before it), else the listed error stays pending until the
 * next safety-net poll (an hour here). The model is frame-resolves-listed-error-during-poll.property.test.ts.
 */
import assert from 'node:assert/strict';
import path from 'path';

import { liveWatch, messageWhere } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

interface RuntimeErrors {
  inject(seed: Record<string, unknown>): { id: string; title: string };
  resolve(id: string): void;
}

describe('review 101: a listed error resolved while its poll is answered, under an open firmware error id', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  it('is reported resolved at once, not an interval later', async function () {
    const { raised, resolved, client } = await liveWatch(sim);
    const fw = sim.raiseFirmwareError({ id: '5', title: 'Door open during run', severity: 'Error' });
    await messageWhere('raised', (m) => m.errorId === fw.id, 15_000);

    // the next poll's answer is held once its list was read: the instrument resolves the error meanwhile
    const prep = client.prep;
    const real = prep.pendingErrors.bind(prep);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let read = false;
    prep.pendingErrors = async () => {
      const list = await real();
      if (!read) {
        read = true;
        await held;
      }
      return list;
    };
    try {
      sim.injectPendingError({ id: '5', title: 'Tip pickup failed', severity: 'Error' });
      await until(() => read, 'the listed error’s poll read the list');
      sim.resolvePendingError('5');
      // the resolution frame is read (it resolves the firmware error under the id), then the poll's answer goes in
      await messageWhere('resolved', (m) => (m.payload as Msg).title === 'Door open during run', 15_000);
      release();
      await messageWhere('raised', (m) => (m.payload as Msg).title === 'Tip pickup failed', 15_000);
      await messageWhere('resolved', (m) => (m.payload as Msg).title === 'Tip pickup failed', 15_000);
      assert.equal(raised.length, 2);
      assert.equal(resolved.length, 2);
    } finally {
      release();
      prep.pendingErrors = real;
    }
  });
  it('an error pushed without a source and resolved meanwhile is raised and resolved once', async function () {
    const { raised, resolved, client } = await liveWatch(sim);
    const permits = require(path.resolve(__dirname, '..', '..', 'nodes', 'nodes', 'shared', 'poll-permits.js')) as {
      pollPermits: { inFlight: number };
    };
    await until(() => permits.pollPermits.inFlight === 0, 'no poll in flight');

    const prep = client.prep;
    const real = prep.pendingErrors.bind(prep);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let read = 0;
    let done = 0;
    prep.pendingErrors = async () => {
      const list = await real();
      if (++read === 1) await held;
      done++;
      return list;
    };
    // the simulator's own frames name the source: this error is listed, and pushed by a frame that names none
    const errors = (sim as unknown as { services: { runtimeErrors: RuntimeErrors } }).services.runtimeErrors;
    try {
      const error = errors.inject({ title: 'Tip lost', severity: 'Error' });
      const { source: _source, ...unsourced } = error as unknown as Msg;
      sim.publishEvent('RuntimeError', error.title, unsourced, 'errors');
      await messageWhere('raised', (m) => m.errorId === error.id, 15_000); // from the frame, as a firmware error
      await until(() => read === 1, 'its poll read the list');
      errors.resolve(error.id);
      sim.publishEvent('RuntimeErrorResolved', `Error ${error.id} resolved`, { id: error.id }, 'errors');
      await messageWhere('resolved', (m) => m.errorId === error.id, 15_000); // from the frame
      release();
      await until(() => done >= 2 && permits.pollPermits.inFlight === 0, 'the poll and its follow-up done');
      assert.deepEqual(
        raised.map((m) => m.errorId),
        [error.id],
        'raised once: the list read before its resolution does not raise it again',
      );
      assert.deepEqual(
        resolved.map((m) => m.errorId),
        [error.id],
      );
    } finally {
      release();
      prep.pendingErrors = real;
    }
  });
});
