/**
 * Review finding (review46, lh-run start): `protocol-run/create` may take about 120 s to answer, and the instrument
 * shows no run (Idle) while it works on it. A full deploy (the lh-server node restarted) closed the client, which ended
 * the create request in flight; the start's claim on the instrument was released with it, so the first start msg
 * of the redeployed flow read Idle, took the claim and sent a second create while the instrument was still creating
 * the first run: two creates for one instrument, the thing the claim exists to prevent ("two start msgs arriving
 * together send one create"). Now a create whose answer never came (the connection closed or lost, the deadline) keeps
 * the instrument's start slot until a status read started after it shows a run, or until 120 s after it was sent;
 * a start meanwhile is refused as busy, nothing sent.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { RunStartClaims } from '../../src/client';
import { restartMemory } from '../support/homes';
import { builtNode, useInstrument } from '../support/node-suite';
import { collect, helper, serverFlow, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

/**
 * An instrument that works on `protocol-run/create` until `release()`, showing Idle meanwhile (the test then makes the
 * run in the simulator, as the instrument would once done, whether the client waited or went away). Everything else
 * is forwarded at once.
 */
class SlowCreate {
  readonly creates: string[] = [];
  private readonly held: (() => void)[] = [];
  private server?: http.Server;

  constructor(private readonly target: string) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    const agent = new http.Agent({ keepAlive: false });
    const target = new URL(this.target);
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const forward = (): void => {
          const up = http.request(
            { hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
            (answer) => {
              const parts: Buffer[] = [];
              answer.on('data', (c: Buffer) => parts.push(c));
              answer.on('end', () => {
                if (res.destroyed) return; // the client is gone; the instrument did the work anyway
                res.writeHead(answer.statusCode ?? 502, { 'Content-Type': answer.headers['content-type'] ?? 'text/plain' });
                res.end(Buffer.concat(parts));
              });
            },
          );
          up.on('error', () => res.destroy());
          up.end(Buffer.concat(chunks));
        };
        if (req.method === 'POST' && String(req.url).endsWith('/protocol-run/create')) {
          this.creates.push(String(req.url));
          // the first one takes long: the test creates its run in the simulator when it is done (release)
          if (this.creates.length === 1) return void this.held.push(() => res.destroy());
        }
        forward();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
  }

  release(): void {
    for (const go of this.held.splice(0)) go();
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('review: a create with no answer yet keeps the start slot across a full redeploy', function () {
  this.timeout(30000);
  let slow: SlowCreate;
  const sim = useInstrument({
    simulator: { simulationSpeed: 1000 },
    afterEach: async () => {
      await slow.stop();
      restartMemory();
    },
  });

  beforeEach(async function () {
    slow = new SlowCreate(sim.baseUrl);
    await slow.start();
  });

  async function deploy(): Promise<{ out: Msg[]; caught: Msg[] }> {
    const server = serverFlow(sim, { withB: false, config: { baseUrl: `${slow.url}/` } });
    await helper.load(
      [tlsConfigNode, builtNode('lh-server'), builtNode('lh-run')],
      [
        ...server.nodes,
        {
          id: 'run',
          type: 'lh-run',
          server: 'server',
          operation: 'start',
          protocolId: '1',
          simulate: 'true',
          pollInterval: '0.05',
          timeout: '20',
          wires: [['out']],
        },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['run'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
    return { out: collect(helper.getNode('out')), caught: collect(helper.getNode('caught')) };
  }

  it('the first start of the redeployed flow is refused as busy while the first create is still being worked on', async function () {
    await deploy();
    helper.getNode('run').receive({ topic: 'first' });
    await until(() => slow.creates.length === 1, 'the first create at the instrument', 10000);

    // a full deploy while the instrument works on the create: every node closed and started again
    await helper.unload();
    const { out, caught } = await deploy();
    helper.getNode('run').receive({ topic: 'second' });
    await until(() => caught.length + out.length > 0 || slow.creates.length > 1, 'the second start settled', 10000);
    assert.equal(slow.creates.length, 1, 'a second create was sent while the instrument worked on the first');
    assert.equal(caught.length, 1);
    assert.equal((caught[0]._error as Msg).kind, 'busy');
    assert.equal((caught[0].error as Msg).code, 'LH_BUSY');

    // the instrument is done creating the first run: it shows, and the busy check names it from then on
    slow.release();
    sim.runs.create({ protocolId: 1, simulate: true }, 'labwire');
    helper.getNode('run').receive({ topic: 'third' });
    await until(() => caught.length === 2, 'the third start refused', 10000);
    assert.match(String((caught[1]._error as Msg).message), /start refused: a run of protocol/);
    assert.equal(slow.creates.length, 1);
  });

  it('the slot frees when a status read started after the create shows a run, or 120 s after it was sent', function () {
    let now = 1_000_000;
    const claims = new RunStartClaims(() => now);
    const first = claims.claim('protocol 1', 'start-run');
    first.sendingCreate();
    first.createUnanswered(120_000);
    first.release();
    assert.deepEqual(claims.current(), { what: 'protocol 1', since: 1_000_000 }, 'initialize sees it too');
    now += 119_000;
    const second = claims.claim('protocol 1', 'start-run');
    assert.throws(() => second.refuseWhileCreateUnanswered(), /got no answer.*at most 1 s/);
    second.release();
    now += 1_000;
    assert.doesNotThrow(() => claims.claim('protocol 1', 'start-run').refuseWhileCreateUnanswered());

    const third = new RunStartClaims(() => now);
    const held = third.claim('protocol 2', 'start-run');
    held.sendingCreate();
    held.createUnanswered(120_000);
    held.release();
    const before = third.readingStatus();
    now += 10;
    before('Scheduling'); // a read started with the create: it tells nothing
    assert.ok(third.current());
    third.readingStatus()('Idle');
    assert.ok(third.current(), 'Idle: the instrument may still be creating it');
    third.readingStatus()('Scheduling');
    assert.equal(third.current(), undefined, 'the run shows: the busy check names it from now on');
  });
});
