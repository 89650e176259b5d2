// The fleet tab of the operator dashboard (example 07, issue 35) in a real Chromium: a Node-RED process running the
// example plus two more instruments wired into "fleet (server side)" (a second simulator whose name carries HTML, and
// one that nobody answers), errors raised before the page opens. The tab lists every instrument with its connection
// state and its pending errors with working answer links; after a reload and after a restart of Node-RED the same.
// Chromium from test/support/browser.ts; needs a build (the Node-RED process loads nodes/).
import assert from 'assert';
import fs from 'fs';
import path from 'path';

import { Browser, Page } from 'playwright-core';

import type { Simulator } from '../../src/simulator';
import { launchChromium, localPage } from '../support/browser';
import { freePort } from '../support/free-port';
import { type FlowNode, Replica } from '../support/red-replicas';
import { startSimulator, USER } from '../support/runtime';
import { until } from '../support/until';

const root = path.resolve(__dirname, '..', '..');
const EXAMPLE = path.join(root, 'examples-extra', '07 Operator dashboard (needs Dashboard 2.0).json');
const HOSTILE = 'Bench 2 <img src=x onerror="window.__lhInjected=1">';
const UNPLUGGED = 'Bench 3 (unplugged)';

/** One more instrument as the example's description says: watch errors, answer links, lh-state into the fleet. */
function instrumentBlock(n: number, name: string, baseUrl: string, withPage: boolean): FlowNode[] {
  const nodes: FlowNode[] = [
    { id: `fleet-srv-${n}`, type: 'lh-server', name, baseUrl, instrumentUrl: '', timeout: 2000 },
    {
      id: `fleet-poll-${n}`,
      type: 'lh-error-poll',
      z: 'lh-ex07-tab',
      server: `fleet-srv-${n}`,
      source: 'A',
      interval: '1',
      offlineAfter: '2',
      listen: false,
      // bench 2 with Remember on (the default of a new error watch): after a restart it raises nothing it saw before,
      // and its answer page links the errors it lists; the example's own watch has Remember off (raised again)
      persist: n === 2,
      snapshot: false,
      version: 3,
      wires: [withPage ? [`fleet-links-${n}`] : [], [], []],
    },
    {
      id: `fleet-state-${n}`,
      type: 'lh-state',
      z: 'lh-ex07-tab',
      server: `fleet-srv-${n}`,
      rate: '2',
      machineInterval: '0',
      repeat: '60',
      wires: [['lh-ex07-fleet'], []],
      version: 1,
    },
  ];
  // the answer page before the poll that sends to it (Node-RED starts nodes in order: a poll that raises before its
  // answer page exists sends to nobody)
  if (withPage)
    nodes.splice(1, 0, {
      id: `fleet-links-${n}`,
      type: 'lh-answer-page',
      z: 'lh-ex07-tab',
      server: `fleet-srv-${n}`,
      publicUrl: 'LH_PUBLIC_URL',
      publicUrlType: 'env',
      path: `/lh-answer-${n}`,
      expiryHours: 24,
      linkText: '',
      snapshot: false,
      wires: [[], []],
      version: 2,
    });
  return nodes;
}

/** A test-only door into the fleet node: POST /fleet-test with state documents (the 50-instrument page). */
const testDoor: FlowNode[] = [
  {
    id: 'fleet-door',
    type: 'http in',
    z: 'lh-ex07-tab',
    url: '/fleet-test',
    method: 'post',
    wires: [['fleet-split', 'fleet-ok']],
  },
  { id: 'fleet-split', type: 'split', z: 'lh-ex07-tab', wires: [['lh-ex07-fleet']] },
  { id: 'fleet-ok', type: 'http response', z: 'lh-ex07-tab', statusCode: '204', wires: [] },
];

describe('the fleet tab of the operator dashboard in Chromium (example 07, issue 35)', function () {
  this.timeout(180_000);
  let sim1: Simulator;
  let sim2: Simulator;
  let red: Replica;
  let browser: Browser | undefined;
  let page: Page;
  let base = '';
  const publicUrlBefore = process.env.LH_PUBLIC_URL;

  before(async function () {
    sim1 = await startSimulator();
    sim2 = await startSimulator();
    const unplugged = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    process.env.LH_PUBLIC_URL = base; // the answer links' address, inherited by the Node-RED process
    const example = (JSON.parse(fs.readFileSync(EXAMPLE, 'utf8')) as FlowNode[]).map((n) =>
      n.id === 'lh-server-sim' ? { ...n, baseUrl: sim1.baseUrl, instrumentUrl: sim1.instrumentUrl } : n,
    );
    const flows = [
      ...testDoor,
      ...example,
      ...instrumentBlock(2, HOSTILE, sim2.baseUrl, true),
      ...instrumentBlock(3, UNPLUGGED, unplugged, false),
      // a state node with no instrument (its lh-server not chosen): it says so in its status and adds no row
      { id: 'fleet-state-none', type: 'lh-state', z: 'lh-ex07-tab', server: '', wires: [['lh-ex07-fleet'], []], version: 1 },
    ];
    const credentials = Object.fromEntries(['lh-server-sim', 'fleet-srv-2', 'fleet-srv-3'].map((id) => [id, { ...USER }]));
    red = new Replica('fleet', flows, credentials, { uiPort: port, httpAdminRoot: '/admin' });
    browser = await launchChromium();
    page = await localPage(browser);
  });

  after(async function () {
    await browser?.close();
    await red?.destroy();
    await sim1?.stop();
    await sim2?.stop();
    if (publicUrlBefore === undefined) delete process.env.LH_PUBLIC_URL;
    else process.env.LH_PUBLIC_URL = publicUrlBefore;
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(`--- Node-RED log:\n${red.log.slice(-4000)}`);
  });

  const row = (name: string) => page.locator('.lh-fleet-row').filter({ has: page.locator('.lh-fleet-name', { hasText: name }) });

  /** The fleet tab shows the three instruments as they are: the two simulators online with their error and link. */
  async function showsTheFleet(titles: { sim1: string; sim2: string }): Promise<void> {
    await page.waitForFunction(() => document.querySelectorAll('.lh-fleet-row').length === 3, undefined, { timeout: 60_000 });
    assert.deepEqual(await page.locator('.lh-fleet-name').allTextContents(), [HOSTILE, UNPLUGGED, 'simulator']);
    for (const [name, title, path] of [
      ['simulator', titles.sim1, '/lh-dashboard-answer?t='],
      [HOSTILE, titles.sim2, '/lh-answer-2?t='],
    ]) {
      const r = row(name);
      await r.locator('.lh-fleet-state', { hasText: 'online' }).waitFor({ timeout: 60_000 });
      const error = r.locator('.lh-fleet-error', { hasText: title });
      await error
        .locator('a.lh-fleet-answer')
        .waitFor({ timeout: 60_000 })
        .catch(async (err: unknown) => {
          throw new Error(`${name}: no link in ${JSON.stringify(await page.locator('.lh-fleet').innerText())}: ${String(err)}`);
        });
      const href = await error.locator('a.lh-fleet-answer').getAttribute('href');
      assert.ok(href !== null && href.startsWith(`${base}${path}`), `${name}: link ${String(href)}`);
      // the link leads to the answer page of that error (a GET changes nothing)
      const res = await fetch(href);
      assert.equal(res.status, 200, `${name}: the answer page`);
      const escaped = title.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`); // as the answer page escapes
      assert.ok((await res.text()).includes(escaped), `${name}: the page shows ${title}`);
      assert.equal(await r.locator('.lh-fleet-pending').textContent(), '1');
    }
    await row(UNPLUGGED).locator('.lh-fleet-state', { hasText: 'offline' }).waitFor({ timeout: 60_000 });
    assert.equal(await row(UNPLUGGED).locator('.lh-fleet-pending').textContent(), '0');
    // the name with HTML is text: no element made of it, no script run
    assert.equal(await page.locator('.lh-fleet img').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __lhInjected?: number }).__lhInjected), undefined);
  }

  it('lists every instrument with its state and its pending errors with their links: opened late, reloaded, after a restart', async function () {
    await red.start();
    const polls = (sim: Simulator): number =>
      sim.requests.filter((r) => r.path === '/api/v1/errors/check-for-pending-errors').length;
    const e1 = sim1.injectPendingError({ title: 'Tip pickup failed', severity: 'Error' });
    const e2 = sim2.injectPendingError({ title: 'Clot <b>detected</b>', severity: 'Fatal' });
    const [p1, p2] = [polls(sim1), polls(sim2)];
    await until(() => polls(sim1) >= p1 + 2 && polls(sim2) >= p2 + 2, 'two polls of each watch after the errors', 30_000);

    await page.goto(`${base}/dashboard/fleet`); // opened after the errors were raised
    await showsTheFleet({ sim1: e1.title, sim2: e2.title });
    await page.reload();
    await showsTheFleet({ sim1: e1.title, sim2: e2.title });
    fs.mkdirSync(path.join(root, 'test-output', 'screenshots'), { recursive: true });
    await page.screenshot({ path: path.join(root, 'test-output', 'screenshots', 'dashboard-fleet.png') });

    // Node-RED restarts (flow context and the dashboard's stored msgs are gone): the lh-state nodes say it again
    await red.stop();
    await red.start();
    await page.reload();
    await showsTheFleet({ sim1: e1.title, sim2: e2.title });

    // resolved on the instrument: gone from the tab
    sim2.resolvePendingError(e2.id);
    await row(HOSTILE).locator('.lh-fleet-pending', { hasText: '0' }).waitFor({ timeout: 30_000 });
    assert.equal(await row(HOSTILE).locator('.lh-fleet-error').count(), 0);
  });

  it('says "link expired" for a link past its expiry (the page clock a day and more ahead)', async function () {
    const ctx = await browser!.newContext();
    try {
      const later = await ctx.newPage();
      await later.clock.install({ time: new Date(Date.now() + 25 * 3600_000) });
      await later.goto(`${base}/dashboard/fleet`);
      const r = later.locator('.lh-fleet-row').filter({ has: later.locator('.lh-fleet-name', { hasText: 'simulator' }) });
      await r.locator('.lh-fleet-expired').waitFor({ timeout: 60_000 });
      assert.equal(await r.locator('a.lh-fleet-answer').count(), 0);
      // the operator page too: no link that leads to an expired page
      await later.goto(`${base}/dashboard/operator`);
      await later.locator('.lh-error-expired').first().waitFor({ timeout: 60_000 });
      assert.equal(await later.locator('a.lh-error-link').count(), 0);
    } finally {
      await ctx.close();
    }
  });

  it('shows 50 instruments, each in its row, sorted by name', async function () {
    const docs = Array.from({ length: 50 }, (_, i) => ({
      instrument: `Rack ${String(i).padStart(2, '0')}`,
      connection: { state: i % 5 === 0 ? 'offline' : 'online', reason: i % 5 === 0 ? 'connect ECONNREFUSED' : null },
      run: { state: 'Running', protocol: 'Demo protocol', step: 'Aspirate', progress: i / 50, eta: null },
      errors: { pending: i % 3, mostSevere: null, list: [] },
      updatedAt: new Date().toISOString(),
    }));
    // count the lists the page gets: the flow sends the latest at most once a second, not one list per document
    let lists = 0;
    page.on('websocket', (ws) =>
      ws.on('framereceived', (frame) => {
        if (typeof frame.payload === 'string' && frame.payload.includes('msg-input:lh-ex07-fleet-view')) lists++;
      }),
    );
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('.lh-fleet-row').length === 3, undefined, { timeout: 30_000 });
    const listsBefore = lists;
    const posted = Date.now();
    const res = await fetch(`${base}/fleet-test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(docs),
    });
    assert.equal(res.status, 204);
    await page.waitForFunction(() => document.querySelectorAll('.lh-fleet-row').length === 53, undefined, { timeout: 30_000 });
    // the flow's rate (a delay node sending the latest once a second) as the bound, over the time this took: one list
    // a second, one more for a second begun, not a fixed 3 (250 ms and 1 list on a quiet machine; a slower one takes
    // seconds, with a list each), and far from one list per document
    const sent = lists - listsBefore;
    const seconds = (Date.now() - posted) / 1000;
    assert.ok(sent <= Math.floor(seconds) + 2, `${sent} lists sent to the page for 50 documents in ${seconds} s`);
    const names = await page.locator('.lh-fleet-name').allTextContents();
    assert.deepEqual(names, [...names].sort());
    assert.equal(await page.locator('.lh-fleet-row .lh-fleet-offline').count(), 10 + 1);
    await page.screenshot({ path: path.join(root, 'test-output', 'screenshots', 'dashboard-fleet-50.png'), fullPage: true });
  });
});
