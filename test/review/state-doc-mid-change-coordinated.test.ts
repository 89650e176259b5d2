/**
 * Review finding (review13), end to end: coordinated, error-watch tells a change through the error gate, one event per
 * Redis round trip (marked `more`, then 'settled'). A lab event that lands in that round trip (here a run's progress,
 * published from the check phase right after the change's first event, as run-watch or a machine read would) made
 * lh-state send the document half way: the old firmware error resolved, the new one not yet raised, none listed.
 */
import assert from 'node:assert/strict';

import { Simulator } from '../../src/simulator';
import { bServerFlow, stateNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

// the runtime loads the built nodes: their lab events, not src's
const built = require('../../nodes/observe/lab-events.js') as typeof import('../../src/observe/lab-events');

describeWithRedis('review: coordinated, a lab event between two events of a change shows no step between', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  const db = useRedis();
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  async function load(s: Simulator): Promise<string[][]> {
    const server = bServerFlow(s, { withB: false, config: { coordination: 'coord' } });
    const prefix = `lh-state-mid-change-${process.pid}`;
    await loadFlow(
      [
        { id: 'coord', type: 'lh-coordination', url: db.harness.url, prefix, leaseSeconds: 2 },
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 60, wires: [[], [], []] },
        stateNode([['docs'], []]),
        { id: 'docs', type: 'helper' },
      ],
      server.credentials,
    );
    const documents: string[][] = [];
    helper.getNode('docs').on('input', (msg: { payload: { errors: { list: { title: string }[] } } }) => {
      documents.push(msg.payload.errors.list.map((e) => e.title));
    });
    return documents;
  }

  it('each document lists the old error or the new one, never none', async function () {
    const documents = await load(sim);
    const instrumentKey = `${sim.baseUrl}|`;
    let progress = 0;
    let mores = 0;
    stop = built.onLabEvent((event) => {
      if (process.env.DBG && event.kind !== 'run') console.log(JSON.stringify(event));
      if (event.instrumentKey !== instrumentKey || event.kind !== 'resolved' || !event.more) return;
      mores++;
      // a run's progress during the round trip to Redis that lies between this event and the change's next one
      setImmediate(() =>
        built.publishLab({ instrumentKey, instrument: '', kind: 'run', state: 'Running', progress: ++progress / 10 }),
      );
    });
    await until(() => sim.eventSocketInfo.counts.errors === 1, 'the errors socket', 20000);
    const push = (title: string): number =>
      sim.publishRawFrame(
        'errors',
        JSON.stringify({
          code: 'RuntimeError',
          description: title,
          data: { id: 'fw-1', title, severity: 'Error', source: 'Firmware' },
        }),
      );
    // the holder's first poll (its sweep) is in: the first document
    await until(() => documents.length > 0, 'the first document', 20000);
    let title = 'Pressure fault 0';
    push(title);
    await until(() => documents.some((d) => d.includes(title)), 'a document with the first error', 10000);
    for (let round = 1; round <= 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 120)); // past lh-state's rate: a document may go at once
      title = `Pressure fault ${round}`;
      push(title); // the same id, another error: the old one is over
      await until(() => documents.some((d) => d.includes(title)), `a document with ${title}`, 10000);
    }
    assert.ok(mores >= 3, `the gate path marks the change's events (${mores})`);
    const first = documents.findIndex((d) => d.length > 0);
    assert.deepEqual(
      documents.slice(first).filter((d) => d.length !== 1),
      [],
      `documents: ${JSON.stringify(documents)}`,
    );
  });
});
