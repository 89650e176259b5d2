#!/usr/bin/env node
'use strict';
// By hand, after a build: `node scripts/screenshots.js [dir]` (default test-output/screens). What a user sees, in a real
// Chromium (LH_CHROMIUM, else chromium on PATH), after `npm start` (fresh user directory, every example deployed):
//   editor-NN-<tab>.png     every example tab of the editor (1600 x 1000)
//   debug-notification.png  the debug sidebar with example 01's notification of a raised error
//   policy-dialog-W.png     example 04's error policy dialog at 1600 and 1280 px wide
//   answer-page.png, answer-page-phone.png   the answer page of that error (desktop, phone)
//   dashboard-4-pending-after-reload.png     example 07's dashboard with 4 pending errors, after a reload
// Nothing is asserted here (test/browser/ does that): it is for looking at.
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const { chromium } = require('playwright-core');

const root = path.resolve(__dirname, '..');
const out = path.resolve(process.argv[2] || path.join(root, 'test-output', 'screens'));

function chromiumPath() {
  if (process.env.LH_CHROMIUM) return process.env.LH_CHROMIUM;
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      const file = path.join(dir, name);
      if (fs.existsSync(file)) return file;
    }
  }
  throw new Error('no Chromium: set LH_CHROMIUM or put chromium on PATH');
}

/** `node scripts/start.js` in `userDir` on any free port; resolves with its addresses once the editor is up. */
function start(userDir) {
  const child = spawn(process.execPath, [path.join(root, 'scripts', 'start.js')], {
    cwd: root,
    env: { ...process.env, LH_USER_DIR: userDir, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      text += chunk.toString();
      const editor = /Node-RED editor: (http:\/\/\S+)/.exec(text);
      const sim = /Simulator: A (\S+)\s+B (\S+)/.exec(text);
      if (editor && sim) resolve({ child, editor: editor[1], simA: sim[1] });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`scripts/start.js exited (${code}):\n${text}`)));
  });
}

async function post(url, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function pendingErrors(control) {
  const res = await fetch(`${control}/sim/state`);
  return (await res.json()).pendingErrors;
}

/** Resolves once the edit tray has stopped sliding in (its left edge the same on two polls). */
function trayStill(page) {
  return page.waitForFunction(
    () => {
      const tray = globalThis.document.querySelector('.red-ui-tray');
      const left = tray ? tray.getBoundingClientRect().left : NaN;
      const still = tray && tray.dataset.lastLeft === String(left);
      if (tray) tray.dataset.lastLeft = String(left);
      return still;
    },
    undefined,
    { polling: 100 },
  );
}

async function main() {
  fs.mkdirSync(out, { recursive: true });
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-screens-'));
  fs.writeFileSync(path.join(userDir, '.config.runtime.json'), JSON.stringify({ telemetryEnabled: false }));
  const started = await start(userDir);
  const control = new URL(started.simA).origin;
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking'],
  });
  const shot = (page, name) => page.screenshot({ path: path.join(out, `${name}.png`) });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) =>
        route.request().url().includes('/catalogue.json')
          ? route.fulfill({ json: { name: 'catalogue', updated_at: new Date().toISOString(), modules: [] } })
          : route.abort(),
    );
    await page.goto(started.editor);
    await page.locator('#red-ui-palette-container .red-ui-palette-node').first().waitFor();
    await page.locator('.red-ui-flow-node').first().waitFor();

    // every tab, one after the other
    const tabs = await page.evaluate(() => {
      const tabs = [];
      globalThis.RED.nodes.eachWorkspace((ws) => tabs.push({ id: ws.id, label: ws.label }));
      return tabs;
    });
    for (const [i, tab] of tabs.entries()) {
      await page.evaluate((id) => globalThis.RED.workspaces.show(id), tab.id);
      await page.waitForFunction((id) => globalThis.RED.workspaces.active() === id, tab.id);
      await page.evaluate(() => new Promise((r) => globalThis.requestAnimationFrame(() => globalThis.requestAnimationFrame(r))));
      const name = `editor-${String(i + 1).padStart(2, '0')}-${tab.label.replace(/[^a-z0-9]+/gi, '-').replace(/-+$/, '')}`;
      await shot(page, name);
    }

    // example 01: a raised error becomes a notification with its answer link, in the debug sidebar
    const ex01 = tabs.find((t) => /^01 Errors with/.test(t.label));
    if (ex01) await page.evaluate((id) => globalThis.RED.workspaces.show(id), ex01.id);
    await page.evaluate(() => globalThis.RED.sidebar.show('debug'));
    // the link itself, as the editor receives it (the sidebar shows long texts cut, also when opened)
    await page.evaluate(() => {
      globalThis.lhLinks = [];
      globalThis.RED.comms.subscribe('debug', (_topic, m) => {
        const found = /"answerUrl":"([^"]+)"/.exec(String(m.msg));
        if (found) globalThis.lhLinks.push(found[1]);
      });
    });
    await post(`${control}/sim/errors`, { title: 'Clot detected', responses: ['Retry', 'Abort'] });
    const note = page.locator('.red-ui-debug-msg', { hasText: 'the notification (send it' }).first();
    await note.waitFor({ timeout: 60_000 });
    await shot(page, 'debug-notification');
    await note.locator('.red-ui-debug-msg-object-handle').first().click();
    await shot(page, 'debug-notification-expanded');
    const link = await page.evaluate(() => globalThis.lhLinks[0]);

    // example 04's error policy dialog, at two widths
    for (const width of [1600, 1280]) {
      await page.setViewportSize({ width, height: 1000 });
      await page.evaluate(() => {
        const RED = globalThis.RED;
        const policy = RED.nodes.filterNodes({ type: 'lh-error-policy' })[0];
        RED.workspaces.show(policy.z);
        RED.editor.edit(policy);
      });
      const tray = page.locator('.red-ui-tray', { has: page.locator('#node-dialog-cancel') });
      await tray.locator('.rule-step').first().waitFor();
      await trayStill(page);
      await shot(page, `policy-dialog-${width}`);
      await tray.locator('#node-dialog-cancel').click();
      await tray.waitFor({ state: 'detached' });
    }

    // the answer page of that error
    if (link) {
      await page.setViewportSize({ width: 1600, height: 1000 });
      await page.goto(link);
      await shot(page, 'answer-page');
      const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, deviceScaleFactor: 2 });
      await phone.goto(link);
      await shot(phone, 'answer-page-phone');
      await phone.close();
    } else console.error('no answer link reached the debug sidebar');

    // example 07's dashboard: 4 pending errors, after a reload
    const titles = ['Tip pickup failed', 'Door open', 'Liquid level low'];
    for (const title of titles.slice(0, Math.max(0, 4 - (await pendingErrors(control))))) {
      await post(`${control}/sim/errors`, { title, responses: ['Retry', 'Abort'] });
    }
    await page.goto(`${started.editor}dashboard/operator`);
    const listed = (n) =>
      page.waitForFunction((count) => globalThis.document.querySelectorAll('.lh-error').length === count, n, { timeout: 60_000 });
    await listed(4);
    await page.reload();
    await listed(4);
    await shot(page, 'dashboard-4-pending-after-reload');
  } finally {
    await browser.close();
    const exited = new Promise((resolve) => started.child.once('exit', resolve));
    started.child.kill('SIGINT');
    await exited;
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  console.log(`screenshots in ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
