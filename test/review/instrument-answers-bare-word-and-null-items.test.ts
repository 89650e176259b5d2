/**
 * Two answers a real instrument (an ASP.NET service) may write plainer than the simulator, both refused before:
 * - `GET instruments/global-run-state` as the bare word (`Idle`, Content-Type text/plain) where the observed answer
 *   is the JSON string `"Idle"`: "answered with text that is not JSON". A known run state in any letter case is read
 *   now; any other text is still refused.
 * - `GET traces` as `{"items": null}` (a list left null): "expected {items: [...]}". Read as no traces, as a null
 *   list of run records is.
 * A proxy in front of the simulator rewrites those answers; every other answer passes as the simulator gave it.
 */
import assert from 'node:assert/strict';

import { LhError, LiquidHandlerClient } from '../../src/client';
import { answerWith, pathOf, useAnswerProxy } from '../support/answer-proxy';
import { useClients } from '../support/client-suite';
import { USER } from '../support/runtime';
import { until } from '../support/until';

describe('review: answers a real instrument writes plainer (bare run state, traces items null)', function () {
  this.timeout(30000);
  const { sim } = useClients({ strict: false });
  /** the answer given instead of the simulator's for a path (matched on the path without its query) */
  const rewrite = new Map<string, { type: string; body: (simBody: string) => string }>();
  const open: LiquidHandlerClient[] = [];

  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, up, res) => {
      const instead = [...rewrite].find(([p]) => pathOf(req).endsWith(p))?.[1];
      if (!instead || up.status >= 300) return false;
      answerWith(res, up.status, { 'content-type': instead.type }, instead.body(up.body.toString('utf8')));
      return true;
    },
  );
  afterEach(async function () {
    rewrite.clear();
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  const client = (): LiquidHandlerClient => {
    const c = new LiquidHandlerClient({ baseUrl: proxy.url, credentials: { ...USER }, retries: 0 });
    open.push(c);
    return c;
  };

  it('global-run-state as a bare word (text/plain): a known state in any letter case is read, other text refused', async function () {
    const c = client();
    let spell = (name: string): string => name;
    rewrite.set('/instruments/global-run-state', {
      type: 'text/plain; charset=utf-8',
      body: (simBody) => spell(JSON.parse(simBody) as string),
    });
    assert.equal(await c.runs.globalRunState(), 'Idle'); // `Idle`, as a service writing text/plain sends it
    spell = (name) => name.toLowerCase();
    assert.equal(await c.runs.globalRunState(), 'Idle');
    await c.runs.createRun({ protocolId: 1 });
    await until(() => sim.runs.state === 'Loading', 'the run at Loading', 10_000);
    spell = (name) => `${name.toUpperCase()}\r\n`;
    assert.equal(await c.runs.globalRunState(), 'Loading');
    await c.runs.abort();
    for (const text of ['Banana', 'Idle Running', 'Idle;', 'error handling']) {
      spell = () => text;
      await assert.rejects(
        c.runs.globalRunState(),
        (err: LhError) => err.kind === 'response' && /not JSON/.test(err.message),
        JSON.stringify(text),
      );
    }
  });

  it('traces answered {"items": null}: no traces, not a refusal; items of another kind still refused', async function () {
    const c = client();
    let answer = '{"items": null}';
    rewrite.set('/traces', { type: 'application/json', body: () => answer });
    const page = await c.deck.traces({ limit: 10 });
    assert.deepEqual(page.items, []);
    assert.equal(page.limit, 10);
    answer = '{"Items": null, "Total": 0}'; // PascalCase, as an ASP.NET service may write it
    assert.deepEqual((await c.deck.traces()).items, []);
    answer = '{"items": "none"}';
    await assert.rejects(c.deck.traces(), (err: LhError) => err.kind === 'response' && /expected \{items/.test(err.message));
  });
});
