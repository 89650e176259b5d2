import http from 'http';
import https from 'https';

import axios, {
  type AxiosAdapter,
  AxiosHeaders,
  type AxiosResponseHeaders,
  type InternalAxiosRequestConfig,
  type RawAxiosResponseHeaders,
} from 'axios';
import type tls from 'tls';

/**
 * TLS options for interface B, passed whole to the https agent: whatever a tls-config node provides (CA, client
 * certificate as PEM or as a PKCS#12 `pfx`, passphrase, servername, ALPNProtocols, ciphers, ...).
 */
export type TlsOptions = tls.SecureContextOptions &
  Pick<tls.ConnectionOptions, 'servername' | 'ALPNProtocols'> & {
    /** Certificates are verified unless this is explicitly false. */
    rejectUnauthorized?: boolean;
  };

export interface HttpClientOptions {
  maxSockets: number;
  tls?: TlsOptions;
  /** An answer whose body is larger than this fails (axios's maxContentLength). */
  maxResponseBytes: number;
  /** A request body larger than this is not sent (axios's maxBodyLength). */
  maxRequestBytes: number;
}

/** One exchange as the transport asks for it. */
export interface HttpRequest {
  /** Absolute http: or https: URL (path already encoded); `query` is appended by axios. */
  url: string;
  query?: Record<string, string>;
  method: string;
  headers: Record<string, string>;
  /** Sent as UTF-8 (axios adds its Content-Length). */
  body?: string;
  /**
   * Given the request the moment it exists, so that a deadline or close() can end the exchange by destroying it
   * (axios rejects at once). Not an AbortSignal: a controller and axios's listeners on it cost about a fifth of a
   * request's CPU here (profiled; `bench:throughput`).
   */
  bind(req: http.ClientRequest): void;
  /** axios's own timeout for this attempt (the time left of the request's deadline). */
  timeoutMs: number;
  /** A cap on this answer's body instead of the client's (axios stops reading past it). */
  maxResponseBytes?: number;
}

export interface HttpAnswer {
  status: number;
  statusText: string;
  /** Names in lower case. */
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The HTTP client of one instrument: one axios instance with its own keep-alive agents (http for A, https with the
 * tls-config options for B). axios does the exchange itself: its timeout, body limits both ways, decoding of a
 * compressed answer; an attempt is ended by the caller, which destroys the request axios's `transport` hook hands it.
 * What it is told never to do: follow a redirect (the Authorization header must not travel to another host), use a
 * proxy from the environment (instrument URLs are on the lab network), parse or transform a body (the transport reads
 * the answer's bytes itself), or add headers of its own (the wire is what the transport writes: no User-Agent, no
 * Accept-Encoding, as the hand-written exchange of 0.3.2-0.3.3 sent it).
 *
 * Each request goes to the instance's adapter (axios's http adapter) with the instance's config as its template, as
 * `axios.request()` would hand it over after merging: the per-request merge of the instance's defaults and the run
 * through the (empty) interceptor chain cost about a third of a request's CPU (`bench:throughput`, profiled), and
 * nothing of what they do applies here (no interceptors, no transforms, the method's header buckets empty).
 */
export class InstrumentHttp {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  /** the instance's merged config without its headers: the prototype of every request's config */
  private readonly template: Readonly<Omit<InternalAxiosRequestConfig, 'headers'>>;
  /** the instance's common headers (User-Agent and Accept-Encoding switched off), under each request's own */
  private readonly commonHeaders: AxiosHeaders;
  private readonly adapter: AxiosAdapter;

  constructor(options: HttpClientOptions) {
    const { maxSockets } = options;
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' });
    const tlsOptions: TlsOptions = options.tls ?? {};
    this.httpsAgent = new https.Agent({
      ...tlsOptions,
      keepAlive: true,
      maxSockets,
      maxFreeSockets: maxSockets,
      scheduling: 'lifo',
      rejectUnauthorized: tlsOptions.rejectUnauthorized !== false,
    });
    const instance = axios.create({
      adapter: 'http',
      allowAbsoluteUrls: true,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      maxRedirects: 0,
      proxy: false,
      responseType: 'arraybuffer',
      transformRequest: [],
      transformResponse: [],
      validateStatus: () => true,
      maxContentLength: options.maxResponseBytes,
      maxBodyLength: options.maxRequestBytes,
      // false: axios leaves the header out (it would add its User-Agent and ask for compression); Accept and
      // Content-Type are set per request by the transport
      headers: { common: { 'User-Agent': false, 'Accept-Encoding': false } },
    });
    const { headers, ...template } = instance.defaults;
    this.template = template;
    this.commonHeaders = AxiosHeaders.from(headers.common as AxiosHeaders);
    this.adapter = axios.getAdapter(template.adapter);
  }

  /** Resolves with the whole answer, whatever its status; rejects with axios's error (the socket's code kept). */
  async send(request: HttpRequest): Promise<HttpAnswer> {
    // no body, no Content-Type (as the tested client sends pause, resume, abort, cleanup): false stops axios adding
    // its form type to a POST or PUT without one
    const headers: Record<string, string | false> =
      request.body === undefined && BODY_METHODS.has(request.method)
        ? { ...request.headers, 'Content-Type': false }
        : request.headers;
    const config = Object.create(this.template) as InternalAxiosRequestConfig;
    config.url = request.url;
    config.method = request.method.toLowerCase();
    config.params = request.query;
    config.data = request.body;
    config.headers = AxiosHeaders.concat(this.commonHeaders, headers);
    // what axios.request() does past the merge (dispatchRequest): a POST, PUT or PATCH without a Content-Type of its
    // own gets the form type (the transport always names one with a body, and false without)
    if (FORM_METHODS.has(config.method)) config.headers.setContentType('application/x-www-form-urlencoded', false);
    config.timeout = request.timeoutMs;
    if (request.maxResponseBytes !== undefined) config.maxContentLength = request.maxResponseBytes;
    // axios's documented `transport` option: Node's http/https request as axios itself uses it with maxRedirects 0,
    // handed to the caller so that it can end the attempt
    config.transport = {
      request: (options: http.RequestOptions, callback: (res: http.IncomingMessage) => void): http.ClientRequest => {
        const req = options.protocol === 'https:' ? https.request(options, callback) : http.request(options, callback);
        request.bind(req);
        return req;
      },
    };
    const res = await this.adapter(config);
    return {
      status: res.status,
      statusText: res.statusText,
      headers: headersOf(res.headers),
      body: Buffer.isBuffer(res.data) ? res.data : Buffer.from(res.data ?? ''),
    };
  }

  /** Destroys every socket, in use or free. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** The methods axios gives a form Content-Type when they carry none. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** The same, as axios spells them once it has the method in lower case. */
const FORM_METHODS = new Set(['post', 'put', 'patch']);

/** axios's error for an answer over maxContentLength. */
export function isAnswerTooLarge(err: unknown): boolean {
  return axios.isAxiosError(err) && /maxContentLength/.test(err.message);
}

function headersOf(headers: RawAxiosResponseHeaders | AxiosResponseHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === 'string') out[name.toLowerCase()] = value;
    else if (Array.isArray(value)) out[name.toLowerCase()] = value.join(', ');
  }
  return out;
}
