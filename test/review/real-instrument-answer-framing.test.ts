/**
 * A real instrument frames its answers in ways the simulator does not (observed-instrument.md; an ASP.NET service
 * behind IIS): `Content-Type` missing or `text/plain` over JSON, a byte order mark before the JSON, a chunked body
 * cut anywhere, property names in PascalCase or any other letter case, `protocolRunState` as its number, its name in
 * any case or its digits as text. Whatever the framing (seeded draws per answer, a proxy in front of the simulator
 * re-framing each one), every read of the client gives what it gives from the simulator's own answer.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { LiquidHandlerClient, RUN_STATE_NAMES } from '../../src/client';
import { type UpstreamAnswer, useAnswerProxy } from '../support/answer-proxy';
import { useClients } from '../support/client-suite';
import { Rng } from '../support/prng';
import { USER } from '../support/runtime';
import { until } from '../support/until';

interface Framing {
  contentType: 'as-is' | 'none' | 'text/plain' | 'json-charset';
  bom: boolean;
  chunks: number;
  keys: 'as-is' | 'pascal' | 'lower' | 'upper';
  runState: 'as-is' | 'number' | 'lower-name' | 'digits';
}

function drawFraming(rng: Rng): Framing {
  return {
    contentType: rng.pick(['as-is', 'none', 'text/plain', 'json-charset'] as const),
    bom: rng.chance(0.5),
    chunks: rng.int(0, 4),
    keys: rng.pick(['as-is', 'pascal', 'lower', 'upper'] as const),
    runState: rng.pick(['as-is', 'number', 'lower-name', 'digits'] as const),
  };
}

function renameKeys(value: unknown, f: Framing): unknown {
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, f));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name =
      f.keys === 'pascal'
        ? key[0].toUpperCase() + key.slice(1)
        : f.keys === 'lower'
          ? key.toLowerCase()
          : f.keys === 'upper'
            ? key.toUpperCase()
            : key;
    out[name] = key === 'protocolRunState' ? runState(v, f) : renameKeys(v, f);
  }
  return out;
}

function runState(value: unknown, f: Framing): unknown {
  const code = typeof value === 'number' ? value : RUN_STATE_NAMES.indexOf(value as (typeof RUN_STATE_NAMES)[number]);
  if (code < 0) return value;
  if (f.runState === 'number') return code;
  if (f.runState === 'digits') return String(code);
  if (f.runState === 'lower-name') return RUN_STATE_NAMES[code].toLowerCase();
  return value;
}

/** The answer re-framed: JSON bodies renamed, the type header, a BOM, the body cut into chunks (chunked encoding). */
function reframe(res: http.ServerResponse, up: UpstreamAnswer, f: Framing): void {
  const body = up.body;
  const headers = { ...up.headers };
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  let out = body;
  const type = String(up.headers['content-type'] ?? '');
  if (/json/.test(type) && body.length > 0) {
    out = Buffer.from(JSON.stringify(renameKeys(JSON.parse(body.toString('utf8')), f)));
    if (f.bom) out = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), out]);
    if (f.contentType === 'none') delete headers['content-type'];
    else if (f.contentType === 'text/plain') headers['content-type'] = 'text/plain; charset=utf-8';
    else if (f.contentType === 'json-charset') headers['content-type'] = 'application/json; charset=utf-8';
  }
  if (f.chunks === 0) {
    res.writeHead(up.status, { ...headers, 'content-length': String(out.length) });
    return void res.end(out);
  }
  res.writeHead(up.status, headers); // no length: Node sends it chunked
  const size = Math.max(1, Math.ceil(out.length / (f.chunks + 1)));
  for (let at = 0; at < out.length; at += size) res.write(out.subarray(at, at + size));
  res.end();
}

describe('review: a real instrument framing its answers its own way (seeded)', function () {
  this.timeout(60000);
  const { sim } = useClients({ strict: false });
  let framing: Framing | undefined;
  const open: LiquidHandlerClient[] = [];

  // the login answer is left as it is: its token is what every other request carries
  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, up, res) => {
      if (!framing || /\/authenticate/.test(req.url ?? '')) return false;
      reframe(res, up, framing);
      return true;
    },
  );
  afterEach(async function () {
    framing = undefined;
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  /** Only the named fields of a record (what the client reads and promises; other fields pass through as sent). */
  const only = (value: unknown, names: readonly string[]): Record<string, unknown> => {
    const r = value as Record<string, unknown>;
    return Object.fromEntries(names.map((n) => [n, r[n]]));
  };

  /** Every read a flow makes of interface A, as the values the client reads from it. */
  async function reads(c: LiquidHandlerClient): Promise<Record<string, unknown>> {
    const pending = await c.prep.pendingErrors();
    const status = await c.runs.status();
    const validation = await c.runs.validateProtocol(1);
    const traces = await c.deck.traces();
    const heater = await c.deck.temperatureStatus();
    return {
      pending: pending.map((e) => only(e, ['id', 'groupId', 'title', 'message', 'severity', 'errorResponses', 'errorData'])),
      status: only(status, [
        'protocolRunState',
        'stateCode',
        'isRunInProgress',
        'isSimulation',
        'protocolId',
        'protocolName',
        'startTime',
        'estimatedEndTime',
      ]),
      global: await c.runs.globalRunState(),
      names: await c.runs.protocolNames(),
      records: (await c.runs.listRunData()).map((r) => only(r, ['id', 'protocolName', 'startTime', 'runResult'])),
      ready: await c.machine.systemReady(),
      identity: await c.machine.identity(),
      connection: await c.machine.connectionStatus(),
      sensors: await c.machine.sensorStatus(),
      validation: only(validation, ['protocolId', 'isValid', 'validationErrors']),
      traces: traces.items.map((i) => only(i, ['date', 'message'])),
      heater: only(heater, ['currentTemperature', 'targetTemperature']),
      initialised: await c.deck.isInitialized(),
      speed: await c.runs.simulationSpeed(),
    };
  }

  it('40 framings drawn per answer: every read gives what the plain answer gives, also during a run', async function () {
    const c = new LiquidHandlerClient({ baseUrl: proxy.url, credentials: { ...USER }, retries: 0 });
    open.push(c);
    sim.injectPendingError({ severity: 'Error' });
    const rng = new Rng(49);
    for (let round = 0; round < 40; round++) {
      if (round === 20) {
        await c.runs.createRun({ protocolId: 1 }); // a state other than Idle
        // Loading waits for load-complete: a state that holds between the plain read and the framed one (the run
        // reaches it by itself; a read in Scheduling could see Scheduled next on a busy machine)
        await until(() => sim.runs.state === 'Loading', 'the run at Loading', 10_000);
      }
      framing = undefined;
      const plain = await reads(c);
      framing = drawFraming(rng);
      const framed = await reads(c);
      assert.deepEqual(framed, plain, `round ${round}: ${JSON.stringify(framing)}`);
      // the camera's PNG bytes, whatever its type header says (a trace each: taken after the reads of the round)
      const framedPhoto = await c.deck.snapshot();
      framing = undefined;
      const plainPhoto = await c.deck.snapshot();
      assert.equal(framedPhoto.contentType, 'image/png');
      assert.ok(framedPhoto.content.equals(plainPhoto.content), `round ${round}: the same image`);
    }
  });
});
