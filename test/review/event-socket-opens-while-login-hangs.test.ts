/**
 * Review (observed-instrument.md: the tested client opens both websockets with no headers; firmware errors during a
 * run arrive on `instincterrors` only). The package offers the session's bearer token on the upgrade, and waited for
 * it: a login the instrument was slow to answer (held, until the 30 s login deadline) kept `instincterrors` closed as
 * long, and a firmware error pushed meanwhile was never heard (it exists on the socket alone: no poll finds it). The
 * socket now waits for a token at most a moment (DEFAULT_TOKEN_WAIT_MS), then opens without one, as the instrument
 * accepts; a session that holds a token still offers it.
 */
import assert from 'node:assert/strict';

import { bServerFlow, pollNode } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';
import { firmwareFrame } from './firmware-id-reuse.support';

type Msg = Record<string, unknown>;

describe('review: the error socket opens while a login hangs', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  it('a firmware error pushed while the login is held is raised', async function () {
    // every POST (the login) held without an answer until the test ends; reads would be answered
    sim.setFaults({ timeoutRate: 1, timeoutHoldMs: 45000, methods: ['POST'] });
    const server = bServerFlow(sim, { withB: false });
    await loadFlow(
      [...server.nodes, pollNode([['raised'], [], []], { interval: 60 }), { id: 'raised', type: 'helper' }],
      server.credentials,
    );
    const raised: Msg[] = collect(helper.getNode('raised'));
    // well before the login's 30 s deadline: the socket does not wait for it
    await until(() => sim.eventSocketInfo.counts.errors > 0, 'the errors socket, while the login is held', 10000);
    assert.ok(
      sim.requests.some((r) => r.path.endsWith('/authenticate')),
      'the login was asked (and is held)',
    );
    assert.equal(sim.eventSocketInfo.upgrades.at(-1)?.authorization, undefined, 'opened without a token');
    sim.publishRawFrame('errors', firmwareFrame({ id: 'fw-held', title: 'Pressure fault', source: 'Firmware' }));
    await until(() => raised.length > 0, 'the firmware error raised', 10000);
    assert.equal(raised[0].errorId, 'fw-held');
    sim.setFaults({});
  });
});
