/**
 * The one way browser tests start Chromium (playwright-core drives it). Which Chromium, first found wins:
 * 1. LH_CHROMIUM: the path of a Chromium or Chrome binary;
 * 2. a system Chromium on PATH (chromium, chromium-browser: Debian's package, say);
 * 3. the Chromium of the devDependency @sparticuz/chromium, which `npm ci` installs on any Linux x64 machine (it is
 *    unpacked once into the temporary directory), so `npm test` needs nothing but Node and npm.
 * Flags: headless, no sandbox (tests run as root in CI), and no background traffic (this machine's network is closed:
 * Chromium's update, sync and safe-browsing requests would only be refused).
 */
import fs from 'fs';
import path from 'path';

import { Browser, BrowserContext, chromium, LaunchOptions, Page } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export interface FoundChromium {
  executablePath: string;
  /** where it came from: LH_CHROMIUM, PATH or @sparticuz/chromium */
  source: 'LH_CHROMIUM' | 'PATH' | '@sparticuz/chromium';
}

function onPath(names: string[], searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
    for (const name of names) {
      const file = path.join(dir, name);
      try {
        fs.accessSync(file, fs.constants.X_OK);
        if (fs.statSync(file).isFile()) return file;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/* @sparticuz/chromium's CommonJS build: a class with static members. */
interface SparticuzChromium {
  executablePath(input?: string): Promise<string>;
}

let found: Promise<FoundChromium> | undefined;

/** The Chromium the tests use (looked up once per process). */
export function findChromium(): Promise<FoundChromium> {
  found ??= (async (): Promise<FoundChromium> => {
    const given = process.env.LH_CHROMIUM;
    if (given) {
      if (!fs.existsSync(given)) throw new Error(`LH_CHROMIUM is ${given}, which does not exist`);
      return { executablePath: given, source: 'LH_CHROMIUM' };
    }
    const system = onPath(['chromium', 'chromium-browser']);
    if (system) return { executablePath: system, source: 'PATH' };
    let packaged: SparticuzChromium;
    try {
      packaged = require('@sparticuz/chromium') as SparticuzChromium;
    } catch (err) {
      throw new Error(
        `no Chromium: LH_CHROMIUM is unset, none is on PATH and @sparticuz/chromium is not installed (npm ci installs it): ${(err as Error).message}`,
      );
    }
    return { executablePath: await packaged.executablePath(), source: '@sparticuz/chromium' };
  })();
  return found;
}

/** Starts headless Chromium with the flags above (plus `options.args`). */
export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  const { executablePath } = await findChromium();
  return chromium.launch({ ...options, executablePath, headless: true, args: [...CHROMIUM_ARGS, ...(options.args ?? [])] });
}

/** A desktop page (1400 × 1000) of `browser` that reaches only this machine (127.0.0.1): anything else is aborted. */
export async function localPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => route.abort(),
  );
  return page;
}

export interface PhonePage {
  /** Chromium, launched in before() */
  browser: Browser;
  /** this test's browser context (a phone), opened in beforeEach() */
  context: BrowserContext;
  /** this test's page in that context */
  page: Page;
}

/**
 * Registers the hooks of a describe block that uses pages as a person on a phone does: Chromium launched in before()
 * and closed in after(); for each test a fresh context (small viewport, touch, JavaScript off: the pages must work
 * without it) with one page, closed after the test. Its fields are set from those hooks on.
 */
export function usePhonePage(): PhonePage {
  const phone = {} as PhonePage;
  before(async function () {
    phone.browser = await launchChromium();
  });
  after(async function () {
    await phone.browser?.close();
  });
  beforeEach(async function () {
    phone.context = await phone.browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      javaScriptEnabled: false,
    });
    phone.page = await phone.context.newPage();
  });
  afterEach(async function () {
    await phone.context?.close();
  });
  return phone;
}
