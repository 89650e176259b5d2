/**
 * A run that finishes while its run watch's holder dies (issue 19): the holder records what it reported in Redis
 * before it sends, so a holder killed between the two loses that msg. The finished msg needs the run record read
 * from the instrument first (a request): read before the record is written, the window between them is one tick,
 * not a request; a holder killed while it reads has recorded nothing, and the next holder reports the run.
 */
import assert from 'assert';

import { trimBase } from '../../src/client';
import { CoordinationKeys } from '../../src/coordination/keys';
import { Replica, useReplicaPair } from '../support/red-replicas';
import { describeWithRedis, useRedis } from '../support/redis-server';
import { until } from '../support/until';

const LEASE_S = 2;
/** the instrument's answers take this long (below the flows' 3 s timeout): the holder is killed within one */
const LATENCY_MS = 2000;

describeWithRedis('coordination: a run finishing while the run watch holder dies (issue 19)', function () {
  this.timeout(120000);
  const db = useRedis();
  const prefix = `lh-finish-${process.pid}`;
  const pair = useReplicaPair(db, prefix, LEASE_S);

  it('the holder killed just after it recorded the finished run (its run record still being read before): reported once', async function () {
    const { sim, collector } = pair;
    await pair.start({ interval: 0.3, runWatch: true });
    const holder = (): Promise<Replica | undefined> => pair.holder();
    const last = (): string | undefined => collector.events.filter((e) => e.kind === 'state').at(-1)?.id;
    await until(async () => (await holder())?.name === 'r1', 'r1 holds (the first name, once both are live)', 10000);
    await new Promise((r) => setTimeout(r, 2 * LEASE_S * 1000));
    const watching = await holder();
    assert.equal(watching?.name, 'r1', 'r1 keeps it');

    const protocol = sim.addProtocol('Short');
    sim.state.protocols
      .get(protocol)!
      .steps.push({ stepType: 'PauseStep', id: 900, name: 'Wait', stepOrder: 1, disabled: false, duration: 600 });
    sim.runs.create({ protocolId: protocol, simulate: true }, 'admin');
    await until(() => last()?.endsWith('>Loading') === true, 'Loading reported', 15000);
    sim.runs.loadComplete({ protocolId: protocol });
    await until(() => last()?.endsWith('>Running') === true, 'Running reported', 15000);

    // the instrument slows down, the run ends: the holder records the finished run, then is killed half a second later
    const memoryKey = new CoordinationKeys(prefix).instrument(`${trimBase(sim.baseUrl)}|`).shared('memory:run:watch-i1');
    const finishedIn = async (): Promise<number> => {
      const raw = await db.redis.get(memoryKey);
      return raw ? (JSON.parse(raw.slice(raw.indexOf('\n') + 1)) as { finished: string[] }).finished.length : 0; // `<token>\n<json>`
    };
    const before = await finishedIn();
    sim.setFaults({ latencyMs: LATENCY_MS });
    sim.runs.abort();
    await until(async () => (await finishedIn()) > before, 'the finished run recorded in Redis', 20000);
    await new Promise((r) => setTimeout(r, 500)); // far less than one of the instrument's answers
    await watching!.kill();
    sim.clearFaults();
    await until(async () => ((await holder()) ?? watching) !== watching, 'r2 took over', 4 * LEASE_S * 1000 + 5000);
    await until(() => collector.events.some((e) => e.kind === 'finished'), 'the finished run reported', 15000).catch(
      () => undefined,
    );
    await new Promise((r) => setTimeout(r, 1500)); // a few polls of the new holder: nothing reported twice
    const finished = collector.events.filter((e) => e.kind === 'finished');
    assert.equal(finished.length, 1, `the finished run reported once: ${JSON.stringify(finished)}`);
  });
});
