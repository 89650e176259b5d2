/**
 * The frame of the answering tests: the package's nodes in the test helper's runtime, with the runtime's HTTP node
 * app (where lh-answer-page serves its page) on a real loopback port (usePageSuite() for a describe block), and small
 * HTTP helpers to use the page as a browser would (GET, form POST).
 */
import http from 'http';

import type { AddressInfo } from 'net';

import type { Simulator } from '../../src/simulator';
import { restartMemory } from '../support/homes';
import { InstrumentOptions, useInstrument } from '../support/node-suite';
import { helper, nextMessage, packageNodes, tlsConfigNode } from '../support/runtime';
import { until } from '../support/until';
import { bServerFlow } from './lh-error-poll.support';

type Msg = Record<string, unknown>;
type NodeModule = (RED: unknown) => unknown;
type App = (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void;

export interface PageServer {
  /** http://127.0.0.1:port: what the lh-answer-page nodes get as public URL */
  url: string;
  close(): Promise<void>;
}

let httpNode: App | undefined;

/** Starts the loopback server in front of the HTTP node app of whatever flow is loaded. */
export async function startPageServer(): Promise<PageServer> {
  const server = http.createServer((req, res) => {
    if (!httpNode) {
      res.statusCode = 503;
      res.end();
      return;
    }
    httpNode(req, res, () => {
      res.statusCode = 404;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface PageSuite {
  /** the simulated instrument (useInstrument()) */
  sim: Simulator;
  /** the page server (startPageServer()), listening from before() on: use it inside hooks and tests only */
  web: PageServer;
  /** An lh-answer-page node 'page' on the config node 'server', its public URL the page server's; `extra` adds or overrides. */
  pageNode(extra?: Msg): Msg;
  /** pageNode() on /lh-answer wired to two helper nodes, 'out' (its msgs) and 'audit' (its audit msgs), with them. */
  pageWithOutputs(extra?: Msg): Msg[];
}

/**
 * Registers the hooks of a describe block that tests the answer page: useInstrument() (after each test the watches
 * and the answers this Node-RED remembers are forgotten, then `options.afterEach` runs) and the page server, started
 * in before() and closed in after().
 */
export function usePageSuite(options: InstrumentOptions = {}): PageSuite {
  const sim = useInstrument({
    ...options,
    afterEach: async () => {
      restartMemory();
      await options.afterEach?.();
    },
  });
  let server: PageServer | undefined;
  before(async function () {
    server = await startPageServer();
  });
  after(async function () {
    await server?.close();
  });
  const web: PageServer = {
    get url(): string {
      if (!server) throw new Error('the page server starts in before(): use web.url inside hooks and tests');
      return server.url;
    },
    close: async () => server?.close(),
  };
  const pageNode = (extra: Msg = {}): Msg => ({
    id: 'page',
    type: 'lh-answer-page',
    server: 'server',
    publicUrl: web.url,
    publicUrlType: 'str',
    ...extra,
  });
  const pageWithOutputs = (extra: Msg = {}): Msg[] => [
    pageNode({ path: '/lh-answer', wires: [['out'], ['audit']], ...extra }),
    { id: 'out', type: 'helper' },
    { id: 'audit', type: 'helper' },
  ];
  return { sim, web, pageNode, pageWithOutputs };
}

/** Every node of the package, the core tls-config node and `extra` modules, with the HTTP node app captured. */
export async function loadWithPage(
  flow: Msg[],
  credentials: Record<string, Record<string, string>>,
  extra: NodeModule[] = [],
): Promise<void> {
  const capture: NodeModule = (RED) => {
    httpNode = (RED as { httpNode: App }).httpNode;
  };
  await helper.load([capture, tlsConfigNode, ...packageNodes(), ...extra], flow, credentials);
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export function fetchText(
  url: string,
  options: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = options.form ? Buffer.from(new URLSearchParams(options.form).toString()) : undefined;
    const req = http.request(
      url,
      {
        method: options.method ?? (body ? 'POST' : 'GET'),
        agent: false,
        headers: {
          ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(body.length) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The hidden fields and buttons of the page's form: `o` is its signed state (the buttons post positions, `#0`, `#1`, …,
 * and their labels show the responses and actions).
 */
export function formOf(html: string): {
  t: string;
  form: string;
  o: string;
  buttons: { name: string; value: string; label: string }[];
} {
  const hidden = (name: string): string => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  const buttons = [...html.matchAll(/<button type="submit" name="(\w+)" value="([^"]*)"[^>]*>([^<]*)<\/button>/g)].map((m) => ({
    name: m[1],
    value: unescape(m[2]),
    label: unescape(m[3]),
  }));
  return { t: unescape(hidden('t')), form: unescape(hidden('form')), o: unescape(hidden('o')), buttons };
}

function unescape(s: string): string {
  return s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');
}

/** A button's label without the page's " (default)" mark. */
export function buttonText(label: string): string {
  return label.replace(/ \(default\)$/, '');
}

/**
 * Answers on the page as a person does: GET the link, press the button labelled `value` (a response, or an action's
 * text), optionally with a name. A B action given by its id (no label shows it) is posted as a form shown before
 * positions did (`action=<id>`, no state), which the page still takes.
 */
export async function answerOnPage(link: string, value: string, by = '', headers: Record<string, string> = {}): Promise<Reply> {
  const page = await fetchText(link, { headers });
  const form = formOf(page.text);
  const button = form.buttons.find((b) => buttonText(b.label) === value);
  if (button)
    return fetchText(link.split('?')[0], {
      form: { t: form.t, form: form.form, o: form.o, by, [button.name]: button.value },
      headers,
    });
  if (form.buttons.length === 0 || !/^\d+$/.test(value))
    throw new Error(`no button ${value} on the page: ${page.status} ${page.text.slice(0, 400)}`);
  return fetchText(link.split('?')[0], { form: { t: form.t, form: form.form, by, [form.buttons[0].name]: value }, headers });
}

/** A coordinated page's link to an error: the link, its token `t`, and the URL a form posts to. */
export interface CoordinatedLink {
  link: string;
  t: string;
  post: string;
}

/**
 * A Node-RED whose lh-server ('server', interface A only) is coordinated through the Redis at `redisUrl` (key prefix
 * `prefix`), with the suite's answer page (msgs on 'out', audit msgs on 'audit'); once it holds the instrument (the
 * page's link key is then the one shared in Redis), a new pending error and the link the page made for it.
 */
export async function coordinatedPageLink(suite: PageSuite, redisUrl: string, prefix: string): Promise<CoordinatedLink> {
  const server = bServerFlow(suite.sim, { withB: false, config: { coordination: 'coord' } });
  await loadWithPage(
    [{ id: 'coord', type: 'lh-coordination', url: redisUrl, prefix }, ...server.nodes, ...suite.pageWithOutputs()],
    { ...server.credentials, page: { secret: 'test-secret-not-shown' } },
  );
  const coordinated = helper.getNode('server') as unknown as { coordination?: { isHolder: boolean } };
  await until(() => coordinated.coordination?.isHolder === true, 'the Node-RED holds the instrument', 10000);
  const error = suite.sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] });
  const out = nextMessage(helper.getNode('out'));
  helper.getNode('page').receive({ payload: error, source: 'A', event: 'raised', notification: 'sim: Clot' });
  const msg = await out;
  const link = String(msg.answerUrl);
  if (!/\?t=/.test(link)) throw new Error(`the page made no link: ${JSON.stringify(msg.notification)}`);
  return { link, t: new URL(link).searchParams.get('t') ?? '', post: link.split('?')[0] };
}
