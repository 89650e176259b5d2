/** Shared test plumbing: a simulator on random ports and axios clients for A, B and /sim. */
import * as http from 'http';
import * as https from 'https';

import axios, { AxiosInstance, AxiosRequestConfig, AxiosResponse } from 'axios';

import { Simulator, SimulatorOptions } from '../../src/simulator';

export const JSON_PATCH = 'application/json-patch+json';
export const JSON_TYPE = 'application/json';
export const VECTOR = 'application/json; x-api-version=3.0';

export interface Harness {
  sim: Simulator;
  /** interface A at baseUrl (prefix included); never throws on status */
  a: AxiosInstance;
  /** interface B at instrumentUrl, trusting only the simulator's CA */
  b: AxiosInstance;
  /** the /sim control API */
  control: AxiosInstance;
  login(username?: string, password?: string): Promise<string>;
  close(): Promise<void>;
}

/** A simulator in strict (spec-only) mode unless the options say otherwise: the contract tests check interfaces.md. */
export async function startHarness(options: SimulatorOptions = {}): Promise<Harness> {
  const sim = new Simulator(
    options.strict === undefined && options.lenientMediaTypes === undefined ? { strict: true, ...options } : options,
  );
  await sim.start();
  const httpAgent = new http.Agent({ keepAlive: false });
  const httpsAgent = new https.Agent({ ca: sim.ca, keepAlive: false });
  const common: AxiosRequestConfig = {
    validateStatus: () => true,
    httpAgent,
    httpsAgent,
    proxy: false,
    transitional: { silentJSONParsing: true },
  };
  const a = axios.create({ ...common, baseURL: sim.baseUrl });
  const b = axios.create({ ...common, baseURL: sim.instrumentUrl });
  const control = axios.create({ ...common, baseURL: `${sim.controlUrl}/sim` });
  const harness: Harness = {
    sim,
    a,
    b,
    control,
    async login(username = 'admin', password = 'labwire') {
      const res = await a.post('/api/v1/authenticate', { username, password }, { headers: { 'Content-Type': JSON_PATCH } });
      if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.data)}`);
      return (res.data as { token: string }).token;
    },
    async close() {
      httpAgent.destroy();
      httpsAgent.destroy();
      await sim.stop();
    },
  };
  return harness;
}

export function bearer(token: string, contentType?: string): AxiosRequestConfig {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (contentType) headers['Content-Type'] = contentType;
  return { headers };
}

/** Asserts an RFC 7807 body and returns it. */
export function problemOf(res: AxiosResponse): {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: Record<string, string[]>;
} {
  const ct = String(res.headers['content-type'] ?? '');
  if (!ct.startsWith('application/problem+json'))
    throw new Error(`expected problem+json, got '${ct}' (${res.status} ${JSON.stringify(res.data)})`);
  const body = res.data as { type: string; title: string; status: number };
  if (typeof body.title !== 'string' || body.status !== res.status)
    throw new Error(`not a problem details body: ${JSON.stringify(body)}`);
  return res.data as ReturnType<typeof problemOf>;
}

export function describeStatus(res: AxiosResponse): string {
  return `${res.status} ${typeof res.data === 'string' ? res.data : JSON.stringify(res.data)}`;
}

/** A harness and the admin token it logged in with. */
export interface LoggedInHarness extends Harness {
  /** the admin's bearer token (login() in before()) */
  token: string;
}

/**
 * Registers the hooks of a describe block against one simulator: startHarness(options) and the admin's login in
 * before(), sim.reset() before each test, close() in after(). Its fields are set from before() on.
 */
export function useLoggedInHarness(options: SimulatorOptions = {}): LoggedInHarness {
  const h = {} as LoggedInHarness;
  before(async function () {
    Object.assign(h, await startHarness(options));
    h.token = await h.login();
  });
  beforeEach(function () {
    h.sim.reset();
  });
  after(async function () {
    await h.close();
  });
  return h;
}
