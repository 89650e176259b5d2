import { randomBytes } from 'crypto';

import { Simulator } from '../../../src/simulator';
import { Credentials, DebugMessage, EmbeddedRed, FlowNode, loadExample } from '../../support/embedded-red';
import { requestText, TextResponse } from '../../support/http-text';

/** What every example suite gets: the shared embedded Node-RED and a fresh simulator per test. */
export interface E2e {
  red: EmbeddedRed;
  sim: Simulator;
}

/** Not the simulator's default password, which the examples' comments mention: a leak check must not find it there. */
export const USER = { username: 'admin', password: `pw-${randomBytes(6).toString('hex')}` };
export const SERVER_ID = 'lh-server-sim';

/**
 * An example as a user imports it, pointed at the test simulator: the shared lh-server gets the simulator's random
 * ports (its CA is the bundled one, which `simulatorCa` already trusts) and the login as credentials, polls run every
 * 0.5 s instead of 5 s. Everything else is patched by the test that needs it.
 */
export function exampleFlow(
  prefix: string,
  sim: Simulator,
): { flow: FlowNode[]; credentials: Credentials; node(id: string): FlowNode } {
  const flow = loadExample(prefix);
  for (const n of flow) {
    if (n.type === 'lh-server') {
      n.baseUrl = sim.baseUrl;
      n.instrumentUrl = sim.instrumentUrl;
    }
    if (n.type === 'lh-error-poll') n.interval = 0.5;
  }
  const node = (id: string): FlowNode => {
    const found = flow.find((n) => n.id === id);
    if (!found) throw new Error(`the example has no node ${id}`);
    return found;
  };
  return { flow, credentials: { [SERVER_ID]: { ...USER } }, node };
}

/** The value a debug node showed: objects and arrays come JSON-encoded. */
export function debugValue(m: DebugMessage): unknown {
  const format = m.format ?? '';
  if (
    typeof m.msg === 'string' &&
    (format.startsWith('Object') || format.startsWith('array') || format === 'boolean' || format === 'number')
  ) {
    return JSON.parse(m.msg) as unknown;
  }
  return m.msg;
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The hidden fields of an answer page's form (lh-answer-page): the signed link and the one-time form token. */
export function pageForm(html: string): { t: string; form: string; o: string } {
  const field = (name: string): string =>
    (new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '').replace(/&#(\d+);/g, (_, n: string) =>
      String.fromCharCode(Number(n)),
    );
  return { t: field('t'), form: field('form'), o: field('o') };
}

/** A form POST, as a browser sends the answer page's form. */
export function formPost(url: string, fields: Record<string, string>): Promise<TextResponse> {
  const body = Buffer.from(new URLSearchParams(fields).toString());
  return requestText(
    url,
    {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': body.length },
    },
    body,
  );
}

/** Sets environment variables for a describe block's tests (the examples read LH_PUBLIC_URL, CHAT_WEBHOOK_URL) and restores them after each. */
export function useEnv(values: () => Record<string, string>): void {
  const saved: Record<string, string | undefined> = {};
  beforeEach(function () {
    for (const [k, v] of Object.entries(values())) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });
  afterEach(function () {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}
