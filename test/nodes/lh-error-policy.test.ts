import assert from 'node:assert/strict';
import path from 'path';

import FakeTimers from '@sinonjs/fake-timers';

type Clock = ReturnType<typeof FakeTimers.install>;
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, nextMessage, runtimeSettings } from '../support/runtime';
import { answersSent, recoverySubmissions } from '../support/sim-requests';
import { until } from '../support/until';
import { answerOnPage, loadWithPage, PageServer, startPageServer } from './lh-answer-page.support';
import { bServerFlow, pollsDone } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

/** What a restart of Node-RED does to the package's module state. */
const realSetTimeout = setTimeout;

function restartState(): void {
  restartMemory();
}

describe('lh-error-policy', function () {
  this.timeout(20000);
  const sim = useInstrument({ afterEach: restartState });
  let web: PageServer;
  let clock: Clock | undefined;
  before(async function () {
    web = await startPageServer();
  });
  after(async function () {
    await web.close();
  });
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  const puts = (): Msg[] => answersSent<Msg>(sim);
  const submissions = (): { path: string; body: unknown }[] => recoverySubmissions(sim);

  function flow(
    rules: Msg[],
    options: { withB?: boolean; store?: string; poll?: boolean } = {},
  ): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
    const server = options.withB ? bServerFlow(sim) : bServerFlow(sim, { withB: false });
    const onTab = (n: Msg): Msg => ({ ...n, z: 'tab' });
    const nodes: Msg[] = [
      { id: 'tab', type: 'tab', label: 'policy' },
      ...server.nodes,
      onTab({
        id: 'policy',
        type: 'lh-error-policy',
        server: 'server',
        rules,
        store: options.store ?? '',
        wires: [['notify'], ['auto'], ['escalate']],
      }),
      onTab({ id: 'notify', type: 'helper' }),
      onTab({ id: 'auto', type: 'helper' }),
      onTab({ id: 'escalate', type: 'helper' }),
      onTab({ id: 'catcher', type: 'catch', scope: ['policy'], wires: [['caught']] }),
      onTab({ id: 'caught', type: 'helper' }),
      onTab({
        id: 'page',
        type: 'lh-answer-page',
        server: 'server',
        publicUrl: web.url,
        publicUrlType: 'str',
        path: '/lh-answer',
        wires: [['linked'], []],
      }),
      onTab({ id: 'linked', type: 'helper' }),
    ];
    if (options.poll)
      nodes.push(
        onTab({
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'A',
          interval: 0.5,
          wires: [['policy'], ['policy'], []],
        }),
      );
    return { nodes, credentials: { ...server.credentials, page: { secret: 'policy-test-secret' } } };
  }

  const semi = (answer: string, delay = 120, source = 'any'): Msg => ({
    source,
    minSeverity: '',
    pattern: '',
    code: '',
    mode: 'semi-automatic',
    answer,
    delay,
  });

  async function raise(record: Msg, source: 'A' | 'B'): Promise<Msg> {
    const notified = nextMessage(helper.getNode('notify'));
    helper.getNode('policy').receive({ payload: record, source, event: 'raised', notification: 'sim: Error' });
    return notified;
  }

  async function linkFor(record: Msg, source: 'A' | 'B'): Promise<string> {
    const out = nextMessage(helper.getNode('linked'));
    helper.getNode('page').receive({ payload: record, source, event: 'raised' });
    return String((await out).answerUrl);
  }

  const fakeClock = (): Clock =>
    (clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() }));

  it('semi-automatic: notifies with the deadline, and answers with the default after N seconds', async function () {
    const f = flow([semi('Retry', 120)]);
    await loadWithPage(f.nodes, f.credentials);
    fakeClock();
    const error = sim.injectPendingError({ title: 'Clot detected' });
    const notified = await raise(error as unknown as Msg, 'A');
    assert.equal((notified.policy as Msg).mode, 'semi-automatic');
    assert.equal(Date.parse(String(notified.deadline)) - Date.now(), 120_000);
    assert.match(
      String(notified.notification),
      /^sim: Error\nUnless someone answers by \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC[+-]\d\d:\d\d.*, the policy answers: Retry$/,
    );

    await clock?.tickAsync(119_000);
    assert.equal(puts().length, 0, 'the default went out early');
    const auto = nextMessage(helper.getNode('auto'));
    await clock?.tickAsync(1_000);
    const answered = await auto;
    assert.equal(answered.outcome, 'answered');
    assert.equal((answered.payload as Msg).by, 'policy');
    assert.equal(puts().length, 1);
    assert.equal(puts()[0].selectedResponse, 'Retry');
    assert.ok(!sim.state.pendingErrors.some((e) => e.id === error.id));
  });

  // the wall clock stepped back or forward (NTP, a VM resumed) or jittering back while a default waits: it goes out when
  // its delay has passed on the timers, never held for a step's length, never early (seed printed, LH_SEED to replay)
  const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
  it(`semi-automatic: a default goes out after its delay whatever the wall clock does meanwhile (seed ${seed})`, async function () {
    const f = flow([semi('Retry', 120)]);
    const cases = Number(process.env.LH_CASES ?? 3);
    for (let c = 0; c < cases; c++) {
      const rng = new Rng(seed + c);
      const steps: string[] = [];
      // a fresh flow per case: its session reads the real clock (Date.now taken before the fake one), the simulator
      // (the instrument) the fake one, so a token of another case's clock must not carry over
      await helper.unload();
      restartState();
      await loadWithPage(f.nodes, f.credentials);
      fakeClock();
      let ahead = 0;
      const error = sim.injectPendingError({ title: `Clot detected ${c}` });
      const esc = collect(helper.getNode('escalate'));
      await raise(error as unknown as Msg, 'A');
      const before = puts().length;
      for (let ticked = 0; ticked < 119_000;) {
        const t = Math.min(119_000 - ticked, rng.int(1, 30_000));
        await clock?.tickAsync(t);
        ticked += t;
        const draw = rng.next();
        const by =
          draw < 0.3
            ? -rng.pick([60_000, 3_600_000, 3 * 86_400_000])
            : draw < 0.5
              ? rng.int(1_000, Math.max(1_000, 120_000 - ahead)) // in all at most 2 min: the simulator's tokens live 5
              : draw < 0.7
                ? -1
                : 0;
        if (by !== 0) {
          if (by > 0) ahead += by;
          clock?.setSystemTime(Date.now() + by);
          steps.push(String(by));
        }
      }
      assert.equal(puts().length, before, `case ${c}: the default went out early (clock steps ${steps.join(' ')})`);
      const auto = nextMessage(helper.getNode('auto'));
      await clock?.tickAsync(1_000);
      // the answer is real I/O: real time for it (2 s at most)
      for (let i = 0; i < 200 && puts().length === before; i++) await new Promise((r) => realSetTimeout(r, 10));
      assert.ok(
        puts().length > before,
        `case ${c}: no default 120 s after the error (clock steps ${steps.join(' ')}): ${JSON.stringify(esc.map((m) => (m.payload as Msg).reason))}`,
      );
      assert.equal((await auto).outcome, 'answered');
      assert.equal(puts().length, before + 1);
      clock?.uninstall();
      clock = undefined;
    }
  });

  it("is cancelled by a person's answer on the page: nothing more is sent", async function () {
    const f = flow([semi('Retry', 60)]);
    await loadWithPage(f.nodes, f.credentials);
    fakeClock();
    const error = sim.injectPendingError() as unknown as Msg;
    await raise(error, 'A');
    const link = await linkFor(error, 'A');
    const page = await answerOnPage(link, 'Abort', 'Sam');
    assert.equal(page.status, 200, page.text);
    const auto = collect(helper.getNode('auto'));
    const caught = collect(helper.getNode('caught'));
    await clock?.tickAsync(120_000);
    assert.equal(puts().length, 1);
    assert.equal(puts()[0].selectedResponse, 'Abort');
    assert.equal(auto.length, 0);
    assert.equal(caught.length, 0);
  });

  it('is not cancelled by a refused answer: the default still goes out', async function () {
    const f = flow([semi('', 60, 'B')], { withB: true });
    await loadWithPage(f.nodes, f.credentials);
    fakeClock();
    const error = sim.injectInstrumentError() as unknown as Msg; // default action 1 (Retry)
    const notified = await raise(error, 'B');
    assert.equal((notified.policy as Msg).answer, '1');
    const link = await linkFor(error, 'B');
    const refused = await answerOnPage(link, '4'); // no handler registered yet: the instrument refuses
    assert.equal(refused.status, 502, refused.text);
    sim.state.handlers.add('nodered1');
    const auto = nextMessage(helper.getNode('auto'));
    await clock?.tickAsync(60_000);
    assert.equal((await auto).outcome, 'answered');
    assert.equal(submissions().length, 2);
    assert.match(submissions()[1].path, /\/recovery$/);
    assert.equal((submissions()[1].body as Msg).selectedActionId, 1);
    assert.equal(sim.state.instrumentErrors[0].handled, true);
  });

  it('is cancelled when the error is resolved', async function () {
    const f = flow([semi('Retry', 60)]);
    await loadWithPage(f.nodes, f.credentials);
    fakeClock();
    const error = sim.injectPendingError() as unknown as Msg;
    await raise(error, 'A');
    const resolved = nextMessage(helper.getNode('notify'));
    helper.getNode('policy').receive({ payload: error, source: 'A', event: 'resolved' });
    assert.deepEqual((await resolved).policy, { cancelled: true, rule: 1 });
    await clock?.tickAsync(120_000);
    assert.equal(puts().length, 0);
  });

  it('survives a full redeploy and a Node-RED restart: the pending default fires once, not twice', async function () {
    runtimeSettings({ contextStorage: { default: { module: 'memory' }, keep: { module: 'memory' } } });
    const f = flow([semi('Ignore', 100)], { store: 'keep' });
    await loadWithPage(f.nodes, f.credentials);
    await (helper as unknown as { _redNodes: { loadContextsPlugin(): Promise<void> } })._redNodes.loadContextsPlugin();
    await helper.setFlows(f.nodes, 'full', f.credentials);
    fakeClock();
    const error = sim.injectPendingError() as unknown as Msg;
    await raise(error, 'A');
    await clock?.tickAsync(30_000);

    await helper.setFlows(f.nodes, 'full', f.credentials); // a full redeploy
    await clock?.tickAsync(30_000);
    restartState(); // a restart of Node-RED: module state gone, the context store keeps the pending default
    await helper.setFlows(f.nodes, 'full', f.credentials);
    assert.equal(puts().length, 0);

    const auto = nextMessage(helper.getNode('auto'));
    await clock?.tickAsync(40_000);
    assert.equal((await auto).outcome, 'answered');
    assert.equal(puts().length, 1);
    assert.equal(puts()[0].selectedResponse, 'Ignore');

    await helper.setFlows(f.nodes, 'full', f.credentials);
    restartState();
    await helper.setFlows(f.nodes, 'full', f.credentials);
    await clock?.tickAsync(200_000);
    assert.equal(puts().length, 1, 'the default went out twice');
    runtimeSettings({ contextStorage: undefined });
  });

  it('walk-away answers within one poll, and escalates a refused automatic answer', async function () {
    const f = flow(
      [
        { source: 'A', minSeverity: 'Fatal', pattern: '', code: '', mode: 'walk-away', answer: 'Nope', delay: 0 },
        { source: 'A', minSeverity: '', pattern: 'door|lid', code: '', mode: 'walk-away', answer: 'Abort', delay: 0 },
      ],
      { poll: true },
    );
    await loadWithPage(f.nodes, f.credentials);
    const auto = nextMessage(helper.getNode('auto'));
    const injectedAt = sim.requests.length;
    const error = sim.injectPendingError({ title: 'Door open', severity: 'Warning' });
    const answered = await auto;
    // counted in polls, not milliseconds (a busy machine is slower, the poll loop's 0.5 s timers are not): the answer
    // goes out on the msg of the first poll that lists the error; one more poll may start while it is being sent
    const after = sim.requests.slice(injectedAt);
    const answerAt = after.findIndex((r) => r.method === 'PUT');
    assert.ok(answerAt >= 0, 'the answer was sent');
    const pollsBefore = after.slice(0, answerAt).filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;
    assert.ok(pollsBefore >= 1 && pollsBefore <= 2, `${pollsBefore} polls before the answer`);
    assert.equal(answered.errorId, error.id);
    assert.equal(puts().length, 1);
    assert.equal(puts()[0].selectedResponse, 'Abort');

    const escalated = nextMessage(helper.getNode('escalate'));
    sim.injectPendingError({ title: 'Pipette crash', severity: 'Fatal' });
    const e = await escalated;
    assert.equal(e.outcome, 'refused');
    assert.match(String((e.payload as Msg).reason), /selectedResponse must be one of the responses/);
    assert.equal(puts().length, 1);
  });

  it('two errors under one id: each raised once over many polls, never answered automatically, escalated once each (issue 29.5)', async function () {
    const f = flow([{ ...semi('Retry', 0), mode: 'walk-away' }], { poll: true });
    await loadWithPage(f.nodes, f.credentials);
    const escalated = collect(helper.getNode('escalate'));
    sim.injectPendingError({ id: '7', title: 'Clot detected', severity: 'Error' });
    sim.injectPendingError({ id: '7', title: 'Door open', severity: 'Warning', shareId: true });
    await until(() => escalated.length >= 2, 'both escalated').catch((err: Error) => {
      const seen = escalated.map((m) => [m.outcome, (m.payload as Msg).reason]);
      throw new Error(`${err.message}: ${JSON.stringify({ seen, puts: puts().length })}`);
    });
    await pollsDone(sim, 6);
    assert.equal(puts().length, 0, 'nothing sent to the ambiguous id');
    // raised again on a later poll, each would be tried and escalated again
    assert.equal(escalated.length, 2, 'each raised and escalated once');
    assert.deepEqual(
      escalated.map((e) => (e.payload as Msg).errorKey),
      ['7', '7'],
    );
    for (const e of escalated) {
      assert.equal(e.outcome, 'ambiguous');
      assert.match(String((e.payload as Msg).reason), /error 7 is ambiguous/);
    }
  });

  it('refuses an invalid rule at deploy, naming it', async function () {
    const f = flow([{ ...semi('Retry'), pattern: '(' }]);
    await loadWithPage(f.nodes, f.credentials);
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('policy').receive({ payload: sim.injectPendingError(), source: 'A', event: 'raised' });
    const failed = await caught;
    assert.match(String((failed.error as Msg).message), /rules\[0\]\.pattern is not a regular expression/);
    assert.equal(puts().length, 0);
  });

  it('refuses a backreference at deploy naming rule and reason; a catastrophic-backtracking pattern matches at once (issue 17.6)', async function () {
    const refused = flow([
      { ...semi('Retry'), pattern: 'ok' },
      { ...semi('Retry'), pattern: '(tip)\\1' },
    ]);
    await loadWithPage(refused.nodes, refused.credentials);
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('policy').receive({ payload: sim.injectPendingError(), source: 'A', event: 'raised' });
    assert.match(String(((await caught).error as Msg).message), /rules\[1\]\.pattern .*linear time.*invalid escape sequence/);
    await helper.unload();

    const f = flow([{ ...semi('Retry', 0), pattern: '(\\w+\\s*)+failed', mode: 'walk-away' }]);
    await loadWithPage(f.nodes, f.credentials);
    const message = `${'a'.repeat(59)}!`; // 25 s+ of backtracking for a RegExp; linear for RE2
    const started = Date.now();
    const error = sim.injectPendingError({ title: 'Pipetting', message, responses: ['Retry'] });
    helper.getNode('policy').receive({ payload: error, source: 'A', event: 'raised' });
    const hit = sim.injectPendingError({ title: 'Tip pickup failed', message, responses: ['Retry'] });
    helper.getNode('policy').receive({ payload: hit, source: 'A', event: 'raised' });
    await until(() => puts().length === 1, 'the walk-away answer', 20000);
    assert.equal((puts()[0] as Msg).id, hit.id, 'only the matching error was answered');
    // a safety net for a hang, not a speed test: linear matching takes milliseconds, a backtracking RegExp 25 s+ for
    // each of the two messages (more on a busy machine); 12 s is far from both
    assert.ok(Date.now() - started < 12000, 'the event loop was never blocked');
  });
});

describe('lh-error-policy rules (pure)', function () {
  const rulesModule = require(path.resolve(__dirname, '..', '..', 'nodes', 'nodes', 'lh-error-policy', 'rules.js')) as {
    compileRules(v: unknown): { index: number }[];
    matchRule(rules: unknown[], source: 'A' | 'B', record: Msg): { index: number } | undefined;
  };
  const { compileRules, matchRule } = rulesModule;

  it('matches in order on source, minimum severity, code and a case-insensitive title/message pattern', function () {
    const rules = compileRules([
      { source: 'B', mode: 'walk-away', answer: '3' },
      { source: 'A', minSeverity: 'Error', pattern: 'clot', mode: 'semi-automatic', answer: 'Retry' },
      { source: 'A', code: '1042', mode: 'manual' },
      { mode: 'manual' },
    ]);
    assert.equal(matchRule(rules, 'B', { title: 'x' })?.index, 0);
    assert.equal(matchRule(rules, 'A', { title: 'CLOT detected', severity: 'Error' })?.index, 1);
    assert.equal(matchRule(rules, 'A', { title: 'Clot', severity: 'Warning' })?.index, 3, 'below the minimum severity');
    assert.equal(
      matchRule(rules, 'A', { message: 'a clot', severity: 'Novel' })?.index,
      1,
      'an unknown severity is never filtered out',
    );
    assert.equal(matchRule(rules, 'A', { title: 'Door', code: 1042 })?.index, 2);
    assert.equal(matchRule(compileRules([]), 'A', { title: 'x' }), undefined);
  });

  it('names the rule and field of a bad setting', function () {
    const bad: [unknown, RegExp][] = [
      [[{ mode: 'sometimes' }], /rules\[0\]\.mode must be one of manual, semi-automatic, walk-away/],
      [[{ mode: 'manual' }, { source: 'C' }], /rules\[1\]\.source must be any, A or B/],
      [[{ minSeverity: 'Loud' }], /rules\[0\]\.minSeverity/],
      [[{ source: 'B', answer: 'Retry', mode: 'walk-away' }], /rules\[0\]\.answer must be an action id/],
      [[{ delay: -1 }], /rules\[0\]\.delay must be 0 to/],
      ['rules', /rules must be a list/],
    ];
    for (const [value, message] of bad) assert.throws(() => compileRules(value), message);
  });
});
