/**
 * Binary downloads of interface A (the run report PDF, the pipetting CSV): the transport answers JSON as text,
 * which would corrupt a PDF, so files travel here as bytes. Same rules as the transport: the session's token,
 * no redirects (the Authorization header never leaves the configured host), certificates verified unless switched
 * off, a total deadline, one re-login after a 401, GETs retried once after a connection error or a 5xx.
 */
import http from 'http';
import https from 'https';
import axios, { AxiosInstance, AxiosResponse } from 'axios';
import { LhError } from './errors';
import type { TlsOptions } from './transport';

export const MAX_FILE_BYTES = 32 * 1024 * 1024;
const RETRY_DELAY_MS = 250;

export interface FileDownload {
  data: Buffer;
  contentType: string;
  /** the file name the instrument suggests (Content-Disposition), if any */
  filename?: string;
}

export interface FileFetcherOptions {
  /** the full URL of a path below A's API root */
  urlFor: (path: string) => string;
  /** the bearer token to send (undefined: none) */
  token: () => Promise<string | undefined>;
  /** makes the session log in again after a 401 */
  relogin: () => Promise<void>;
  timeoutMs: number;
  tls?: TlsOptions;
}

export class FileFetcher {
  private readonly axios: AxiosInstance;
  private readonly httpAgent = new http.Agent({ keepAlive: false });
  private readonly httpsAgent: https.Agent;
  private closed = false;

  constructor(private readonly options: FileFetcherOptions) {
    const tls = options.tls ?? {};
    this.httpsAgent = new https.Agent({
      keepAlive: false,
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      passphrase: tls.passphrase,
      servername: tls.servername,
      rejectUnauthorized: tls.rejectUnauthorized !== false,
    });
    this.axios = axios.create({
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      maxRedirects: 0,
      proxy: false,
      responseType: 'arraybuffer',
      validateStatus: () => true,
      maxContentLength: MAX_FILE_BYTES,
    });
  }

  async get(path: string, operation: string, accept: string): Promise<FileDownload> {
    let relogged = false;
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new LhError('the connection to the instrument was closed', { kind: 'network', operation });
      const token = await this.options.token();
      let res: AxiosResponse<ArrayBuffer>;
      try {
        res = await this.axios.request<ArrayBuffer>({
          url: this.options.urlFor(path),
          method: 'GET',
          headers: { Accept: accept, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
      } catch (err) {
        const failure = networkError(err, operation, this.options.timeoutMs);
        if (attempt === 1 && failure.kind === 'network') {
          await pause(RETRY_DELAY_MS);
          continue;
        }
        throw failure;
      }
      if (res.status === 401 && token && !relogged) {
        relogged = true;
        await this.options.relogin();
        continue;
      }
      if (res.status >= 500 && attempt === 1) {
        await pause(RETRY_DELAY_MS);
        continue;
      }
      if (res.status < 200 || res.status >= 300) throw httpError(res, operation);
      const type = header(res, 'content-type');
      return { data: Buffer.from(res.data), contentType: type, filename: filenameOf(header(res, 'content-disposition')) };
    }
  }

  close(): void {
    this.closed = true;
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function header(res: AxiosResponse, name: string): string {
  const v: unknown = res.headers[name];
  return typeof v === 'string' ? v : '';
}

/** `attachment; filename="run-1.pdf"` → run-1.pdf (path parts and quotes removed). */
export function filenameOf(disposition: string): string | undefined {
  const star = /filename\*\s*=\s*(?:UTF-8'')?([^;]+)/i.exec(disposition);
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(disposition);
  let name = star ? safeDecode(star[1].trim()) : plain?.[1].trim();
  if (!name) return undefined;
  name = name.replace(/^.*[\\/]/, '').replace(/[^\w.\- ]/g, '_');
  return name === '' || name === '.' || name === '..' ? undefined : name;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/^"|"$/g, ''));
  } catch {
    return text;
  }
}

function httpError(res: AxiosResponse<ArrayBuffer>, operation: string): LhError {
  const text = Buffer.from(res.data ?? new ArrayBuffer(0))
    .toString('utf8')
    .slice(0, 2000);
  let body: unknown = text;
  let detail = '';
  try {
    body = JSON.parse(text) as unknown;
    const b = body as Record<string, unknown>;
    detail = [b.title, b.detail].filter((x): x is string => typeof x === 'string').join(': ');
  } catch {
    detail = text.length < 200 && !text.includes('<') ? text : '';
  }
  if (res.status >= 300 && res.status < 400) {
    return new LhError(`${operation}: the instrument redirects to another address; redirects are not followed`, {
      kind: 'http',
      operation,
      statusCode: res.status,
    });
  }
  const kind = res.status === 401 || res.status === 403 ? 'auth' : 'http';
  return new LhError(`${operation} failed: ${res.status} ${detail || res.statusText || 'request failed'}`, {
    kind,
    operation,
    statusCode: res.status,
    body,
  });
}

function networkError(err: unknown, operation: string, timeoutMs: number): LhError {
  if (err instanceof LhError) return err;
  const e = err as { code?: string; message?: string; name?: string };
  if (
    e.name === 'CanceledError' ||
    e.code === 'ERR_CANCELED' ||
    e.code === 'ECONNABORTED' ||
    /timeout|aborted/i.test(e.message ?? '')
  ) {
    return new LhError(`${operation}: no complete answer from the preparation service (A) within ${timeoutMs} ms`, {
      kind: 'timeout',
      operation,
      code: e.code,
    });
  }
  if (e.code === 'ERR_BAD_RESPONSE' && /maxContentLength/.test(e.message ?? '')) {
    return new LhError(`${operation}: the file is larger than ${MAX_FILE_BYTES} bytes`, { kind: 'response', operation });
  }
  if (e.code && /CERT|SSL|EPROTO/.test(e.code)) {
    return new LhError(`${operation}: the TLS certificate of the preparation service (A) is not trusted (${e.code})`, {
      kind: 'tls',
      operation,
      code: e.code,
    });
  }
  return new LhError(`${operation}: cannot reach the preparation service (A) (${e.code ?? e.message ?? 'connection failed'})`, {
    kind: 'network',
    operation,
    code: e.code,
  });
}
