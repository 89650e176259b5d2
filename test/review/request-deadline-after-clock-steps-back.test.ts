/**
 * A request's one deadline (retries included) against the wall clock set back between two attempts (an NTP step, a
 * VM resumed): the next attempt must still end by the deadline, not wait for as long as the step, or a poll (and the
 * answer of an instrument error behind it) would hang for an hour on an instrument that stopped answering.
 */
import assert from 'node:assert/strict';
import http from 'http';

import FakeTimers from '@sinonjs/fake-timers';

import { LhError } from '../../src/client';
import { Transport } from '../../src/client/transport';
import { closeLocal, listenLocal } from '../support/local-server';

const realSetTimeout = setTimeout;

describe('review: a request deadline after the wall clock steps back', function () {
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  let server: http.Server | undefined;
  let transport: Transport | undefined;
  afterEach(async function () {
    transport?.close();
    clock?.uninstall();
    clock = undefined;
    if (server) await closeLocal(server);
    server = undefined;
  });

  for (const back of [60_000, 3_600_000, 3 * 86_400_000]) {
    it(`a retry after a 503 ends by the deadline when the clock went back ${back / 60_000} min meanwhile`, async function () {
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      let asked = 0;
      server = http.createServer((req, res) => {
        req.resume();
        asked++;
        if (asked > 1) return; // the instrument stopped answering
        clock?.setSystemTime(Date.now() - back); // the host's clock set back while the first answer comes
        res.writeHead(503, { 'Content-Type': 'application/json' });
        res.end('{}');
      });
      const url = await listenLocal(server);
      transport = new Transport({ baseUrl: url, retries: 2, retryBaseDelayMs: 5, timeoutMs: 1000 });
      let outcome: unknown;
      const done = transport
        .request({ api: 'A', method: 'GET', path: '/x', operation: 'read', idempotent: true })
        .then(
          () => 'answered',
          (err: unknown) => err,
        )
        .then((o) => (outcome = o));
      // real time for the I/O, fake time for the timers: 3 s of timers at most (the deadline is 1 s)
      for (let t = 0; t < 3000 && outcome === undefined; t += 50) {
        await new Promise((r) => realSetTimeout(r, 5));
        await clock.tickAsync(50);
      }
      assert.ok(outcome instanceof LhError, `ended by the deadline, not after the step: ${String(outcome)}`);
      assert.equal(asked, 2, `the retry went: ${String(outcome)}`);
      await done;
    });
  }
});
