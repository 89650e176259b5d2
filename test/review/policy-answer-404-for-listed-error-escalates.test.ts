/**
 * review63: the instrument answers an automatic answer with 404 (no such error) while it still lists the error as
 * pending. The 404 meant "not pending" everywhere: the policy logged it at debug level and said nothing, so a
 * walk-away rule's error (never notified: it was to be answered at once) reached nobody, and a semi-automatic
 * default was neither sent nor escalated. As for a 409 (README), a 404 for an error the instrument still lists is now a
 * refusal: the policy escalates it (output 3, `refused`), lh-answer-error sends it to Catch as refused. A 404 for an
 * error the instrument no longer lists (resolved meanwhile) is still "not pending": nothing to escalate.
 */
import assert from 'node:assert/strict';

import { bServerFlow } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow } from '../support/runtime';
import { answersSent, recoverySubmissions } from '../support/sim-requests';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('review: a 404 for an error the instrument still lists', function () {
  this.timeout(30000);
  const sim = useInstrument({
    afterEach: () => {
      sim.setFaults({});
      restartMemory();
    },
  });

  async function load(source: 'A' | 'B', answer: string): Promise<Record<'notify' | 'auto' | 'escalate', Msg[]>> {
    const server = bServerFlow(sim);
    const rule = { id: 'walk', source, steps: [{ mode: 'walk-away', answer }] };
    await loadFlow(
      [
        ...server.nodes,
        { id: 'policy', type: 'lh-error-policy', server: 'server', rules: [rule], wires: [['notify'], ['auto'], ['escalate']] },
        { id: 'notify', type: 'helper' },
        { id: 'auto', type: 'helper' },
        { id: 'escalate', type: 'helper' },
      ],
      server.credentials,
    );
    return {
      notify: collect(helper.getNode('notify')),
      auto: collect(helper.getNode('auto')),
      escalate: collect(helper.getNode('escalate')),
    };
  }

  it('A: a walk-away answer refused with 404 while the error is listed is escalated, once', async function () {
    const out = await load('A', 'Retry');
    sim.setFaults({ statusRate: 1, statusCode: 404, methods: ['PUT'] });
    const e = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    helper.getNode('policy').receive({ payload: structuredClone(e), source: 'A', event: 'raised', errorId: e.id });
    await until(() => out.escalate.length > 0, 'the escalation', 5000);
    assert.equal(answersSent(sim).length, 1, 'sent once, not again');
    assert.equal(out.escalate.length, 1);
    assert.equal(out.escalate[0].outcome, 'refused');
    assert.match(String(out.escalate[0].reason ?? (out.escalate[0].payload as Msg).reason), /still lists it as pending/);
    assert.deepEqual(out.auto, []);
  });

  it('B: a walk-away action refused with 404 while the error is listed is escalated, once', async function () {
    const out = await load('B', '1');
    // logged in first: the faults below answer every POST (a login too) with 404
    const server = helper.getNode('server') as unknown as { client: { instrument: { unhandledErrors(): Promise<unknown> } } };
    await server.client.instrument.unhandledErrors();
    sim.setFaults({ statusRate: 1, statusCode: 404, methods: ['POST'] });
    const e = sim.injectInstrumentError({ title: 'Clot' });
    helper.getNode('policy').receive({ payload: structuredClone(e), source: 'B', event: 'raised', uuid: e.uuid });
    await until(() => out.escalate.length > 0, 'the escalation', 5000).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify({ out, sub: recoverySubmissions(sim).length })}`);
    });
    assert.equal(out.escalate.length, 1);
    assert.equal(out.escalate[0].outcome, 'refused');
    assert.ok(recoverySubmissions(sim).length <= 1);
  });

  /**
   * review69: the re-read of the list after the 404 fails (the instrument busy, a proxy between): whether the error is
   * still pending is unknown. Taken as "not pending", the policy logged it at debug level only and a walk-away error
   * (never notified) reached nobody. As for a 409 (README), unknown is a refusal: escalated, a person looks.
   */
  function failReadsAfter(answerMethod: 'PUT' | 'POST'): () => void {
    let answered = false;
    return sim.onRequest((entry) => {
      if (entry.method === answerMethod && /errors/.test(entry.path)) answered = true;
      // decided at the request's arrival, before its fault roll: every read of the list after the answer fails
      else if (answered && entry.method === 'GET') sim.setFaults({ statusRate: 1, statusCode: 503 });
    });
  }

  it('A: a 404 whose re-read of the list fails is escalated, never dropped', async function () {
    const out = await load('A', 'Retry');
    sim.setFaults({ statusRate: 1, statusCode: 404, methods: ['PUT'] });
    const stop = failReadsAfter('PUT');
    try {
      const e = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
      helper.getNode('policy').receive({ payload: structuredClone(e), source: 'A', event: 'raised', errorId: e.id });
      await until(() => out.escalate.length > 0, 'the escalation', 8000);
    } finally {
      stop();
    }
    assert.equal(answersSent(sim).length, 1, 'sent once, not again');
    assert.equal(out.escalate.length, 1);
    assert.equal(out.escalate[0].outcome, 'refused');
    assert.match(String(out.escalate[0].reason ?? (out.escalate[0].payload as Msg).reason), /could not be read/);
    assert.deepEqual(out.auto, []);
  });

  it('B: a 404 whose re-read of the list fails is escalated, never dropped', async function () {
    const out = await load('B', '1');
    const server = helper.getNode('server') as unknown as { client: { instrument: { unhandledErrors(): Promise<unknown> } } };
    await server.client.instrument.unhandledErrors();
    sim.setFaults({ statusRate: 1, statusCode: 404, methods: ['POST'] });
    const stop = failReadsAfter('POST');
    try {
      const e = sim.injectInstrumentError({ title: 'Clot' });
      helper.getNode('policy').receive({ payload: structuredClone(e), source: 'B', event: 'raised', uuid: e.uuid });
      await until(() => out.escalate.length > 0, 'the escalation', 8000);
    } finally {
      stop();
    }
    assert.equal(out.escalate.length, 1);
    assert.equal(out.escalate[0].outcome, 'refused');
    assert.ok(recoverySubmissions(sim).length <= 1);
  });

  // review69: between the 404 and the re-read, the error left and the instrument reused its id for another error: the
  // error the answer was for is gone ("not pending"), not a refusal that tells a person the id's new error was refused
  it('A: a 404 for an error whose id now names another error escalates nothing', async function () {
    const out = await load('A', 'Retry');
    sim.setFaults({ statusRate: 1, statusCode: 404, methods: ['PUT'] });
    const e = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    const stop = sim.onRequest((entry) => {
      if (entry.method !== 'PUT') return;
      sim.resolvePendingError(e.id);
      sim.injectPendingError({ id: e.id, reuseId: true, title: 'Door open', severity: 'Error', responses: ['Retry'] });
    });
    const policy = helper.getNode('policy') as unknown as { on(e: string, l: (c: { args: unknown[] }) => void): void };
    const debug: string[] = [];
    policy.on('call:debug', (c) => debug.push(String(c.args[0])));
    try {
      helper.getNode('policy').receive({ payload: structuredClone(e), source: 'A', event: 'raised', errorId: e.id });
      await until(() => debug.some((t) => t.includes('404')) || out.escalate.length > 0, 'the outcome of the answer', 5000);
    } finally {
      stop();
    }
    assert.deepEqual(out.escalate, [], 'the new error under the id is not escalated as refused');
    assert.deepEqual(out.auto, []);
    assert.equal(answersSent(sim).length, 1);
  });

  it('A: a 404 for an error no longer listed (resolved meanwhile) escalates nothing', async function () {
    const out = await load('A', 'Retry');
    const e = sim.injectPendingError({ title: 'Clot detected', severity: 'Error', responses: ['Retry', 'Abort'] });
    sim.resolvePendingError(e.id);
    sim.setFaults({ statusRate: 1, statusCode: 404, methods: ['PUT'] });
    // the policy's outcome: "not pending", logged at debug level
    const policy = helper.getNode('policy') as unknown as { on(e: string, l: (c: { args: unknown[] }) => void): void };
    const debug: string[] = [];
    policy.on('call:debug', (c) => debug.push(String(c.args[0])));
    helper.getNode('policy').receive({ payload: structuredClone(e), source: 'A', event: 'raised', errorId: e.id });
    await until(() => debug.some((t) => t.includes('404')), 'the outcome of the answer', 5000);
    assert.deepEqual(out.escalate, []);
    assert.deepEqual(out.auto, []);
  });
});
