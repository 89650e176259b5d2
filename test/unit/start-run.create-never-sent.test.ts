/**
 * review52: a create that got no answer holds further starts of this Node-RED for up to 120 s (review46), since the
 * instrument may still be making its run. A create that never left (the connection refused, the host not found: the
 * instrument's service restarting, a wrong name) was held the same way: the instrument back a few seconds later and
 * showing Idle, every start was refused as busy ("a create sent … got no answer, the instrument may still be creating
 * that run") for the rest of the 120 s, though nothing had reached it. Such a create now holds nothing; one that may
 * have reached the instrument (reset, deadline, the client closed by a deploy) still does.
 *
 * The failures are the client's own (a real LiquidHandlerClient against a port nobody listens on, and the errors it
 * makes of the other codes), each followed at once by a second start that finds the instrument Idle.
 */
import assert from 'node:assert/strict';
import net from 'node:net';

import { LhError, LiquidHandlerClient, RunStartClaims } from '../../src/client';
import { startRun } from '../../src/nodes/lh-run/start-run';
import { runControl, startOptions } from './start-run.support';

/** A port on loopback that nobody listens on (taken, then freed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** What the client's create gives when nothing listens at the instrument's address. */
async function refusedCreate(): Promise<LhError> {
  const client = new LiquidHandlerClient({ baseUrl: `http://127.0.0.1:${await closedPort()}/` });
  try {
    await client.runs.createRun({ protocolId: 1, simulate: true, recompile: false });
  } catch (err) {
    assert.ok(err instanceof LhError, String(err));
    return err;
  } finally {
    await client.close();
  }
  throw new Error('the create reached something');
}

function networkError(code: string): LhError {
  const err = new LhError(`create-run: cannot reach the instrument (${code})`, {
    kind: 'network',
    operation: 'create-run',
    code,
  });
  err.attempts = 1;
  return err;
}

/** Two starts on one instrument: the first's create fails with `failure`; returns whether the second sent its create. */
async function secondStartSends(failure: LhError): Promise<{ sent: boolean; refusal?: string }> {
  const claims = new RunStartClaims();
  let creates = 0;
  const api = runControl({
    createRun: async () => {
      if (++creates === 1) throw failure;
      return { runId: 'r2' };
    },
  });
  // timeoutMs 0: a second start that sends its create fails at once on the stub's Idle (only whether it sent counts)
  const options = startOptions({ protocol: { id: 1 }, claim: (what) => claims.claim(what, 'start-run'), timeoutMs: 0 });
  await assert.rejects(startRun(api, options));
  const second = await startRun(api, options).then(
    () => undefined,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  return { sent: creates === 2, ...(second !== undefined && creates < 2 ? { refusal: second } : {}) };
}

describe('lh-run start: a create that never left holds no later start (review52)', function () {
  this.timeout(20000);

  it('the connection refused: the next start sends its create', async function () {
    const refused = await refusedCreate();
    assert.equal(refused.code, 'ECONNREFUSED');
    const { sent, refusal } = await secondStartSends(refused);
    assert.ok(sent, `the second start was refused though nothing reached the instrument: ${refusal}`);
  });

  for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']) {
    it(`no connection made (${code}): the next start sends its create`, async function () {
      const { sent, refusal } = await secondStartSends(networkError(code));
      assert.ok(sent, `refused: ${refusal}`);
    });
  }

  for (const [what, failure] of [
    ['reset', networkError('ECONNRESET')],
    [
      'closed by a deploy',
      new LhError('the connection to the instrument was closed', { kind: 'network', operation: 'create-run' }),
    ],
    ['deadline', new LhError('create-run: no complete answer within 120000 ms', { kind: 'timeout', operation: 'create-run' })],
  ] as const) {
    it(`a create that may have arrived (${what}) still holds the next start`, async function () {
      const { sent, refusal } = await secondStartSends(failure);
      assert.equal(sent, false);
      assert.match(String(refusal), /got no answer/);
    });
  }
});
