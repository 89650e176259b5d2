import { EventEmitter } from 'events';
import { LhError } from './errors';
import { InstrumentApi } from './instrument';
import { PrepApi } from './prep';
import { Credentials, Session, SessionOptions, UnsignedSpec } from './session';
import { ApiResponse, TlsOptions, Transport } from './transport';

export * from './errors';
export * from './types';
export * as validate from './validate';
export { Transport, TlsOptions, MEDIA_JSON, MEDIA_JSON_PATCH, MEDIA_VECTOR } from './transport';
export { Session, SessionState, Credentials } from './session';
export { PrepApi, softwareSettings } from './prep';
export { InstrumentApi, RecoveryKind } from './instrument';

export interface ClientOptions extends SessionOptions {
  baseUrl: string;
  instrumentUrl?: string;
  timeoutMs?: number;
  tls?: TlsOptions;
  credentials?: Credentials;
  /** Bearer token for interface B; when empty B reuses A's session token. */
  instrumentToken?: string;
  retries?: number;
  retryBaseDelayMs?: number;
}

export type ConnectionState = 'unknown' | 'online' | 'offline';

/** Everything one instrument needs: transport, session, the two APIs, and whether it answers. */
export class LiquidHandlerClient extends EventEmitter {
  readonly transport: Transport;
  readonly session: Session;
  readonly prep: PrepApi;
  readonly instrument: InstrumentApi;
  private connection: ConnectionState = 'unknown';
  private readonly lastWork = new Set<Promise<void>>();

  constructor(private readonly options: ClientOptions) {
    super();
    if (!/^https?:\/\/[^/\s]+/i.test(options.baseUrl ?? '')) {
      throw new LhError(`baseUrl must be an http:// or https:// URL (got ${JSON.stringify(options.baseUrl ?? '')})`, {
        kind: 'config',
        operation: 'configure',
        field: 'baseUrl',
      });
    }
    if (options.instrumentUrl && !/^https?:\/\/[^/\s]+/i.test(options.instrumentUrl)) {
      throw new LhError(`instrumentUrl must be an https:// URL (got ${JSON.stringify(options.instrumentUrl)})`, {
        kind: 'config',
        operation: 'configure',
        field: 'instrumentUrl',
      });
    }
    this.transport = new Transport(options);
    this.session = new Session(this.transport, options.credentials ?? {}, options);
    this.session.on('state', (state) => this.emit('session', state));
    this.prep = new PrepApi((spec) => this.observe(this.session.send(spec)));
    this.instrument = new InstrumentApi((spec) => this.observe(this.sendB(spec)));
  }

  get connectionState(): ConnectionState {
    return this.connection;
  }

  /** Interface A's root URL as configured (trailing slashes removed). */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** Interface B's root URL, when configured. */
  get instrumentUrl(): string | undefined {
    return this.transport.instrumentUrl;
  }

  get hasInstrumentInterface(): boolean {
    return Boolean(this.options.instrumentUrl);
  }

  /**
   * Lets a node finish one last request while the flow stops (e.g. unregistering its error handler): close()
   * waits for it before logging out. The caller bounds it with its own timeout.
   */
  finishBeforeClose(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.lastWork.add(settled);
    void settled.then(() => this.lastWork.delete(settled));
  }

  /** Logs out and frees every socket and timer. */
  async close(): Promise<void> {
    if (this.lastWork.size > 0) await Promise.all([...this.lastWork]);
    await this.session.end();
    this.transport.close();
    this.removeAllListeners();
  }

  private async sendB<T>(spec: UnsignedSpec): Promise<ApiResponse<T>> {
    const token = this.options.instrumentToken;
    if (!token) return this.session.send<T>(spec);
    try {
      return await this.transport.request<T>({ ...spec, token });
    } catch (err) {
      if (err instanceof LhError && err.statusCode === 401) {
        throw new LhError(`${spec.operation}: the instrument rejected the instrument token configured in the lh-server node`, {
          kind: 'auth',
          operation: spec.operation,
          statusCode: 401,
          body: err.body,
        });
      }
      throw err;
    }
  }

  private async observe<T>(request: Promise<T>): Promise<T> {
    try {
      const result = await request;
      this.setConnection('online');
      return result;
    } catch (err) {
      if (err instanceof LhError && (err.kind === 'network' || err.kind === 'timeout')) this.setConnection('offline');
      else if (err instanceof LhError && err.statusCode !== undefined) this.setConnection('online');
      throw err;
    }
  }

  private setConnection(state: ConnectionState): void {
    if (state === this.connection) return;
    this.connection = state;
    this.emit('connection', state);
  }
}
