/* eslint-disable @typescript-eslint/no-explicit-any */
// The boundary with the Node-RED runtime: the small part of its API this package uses, typed here once.

export interface NodeMessage {
  _msgid?: string;
  payload?: unknown;
  topic?: string;
  [property: string]: unknown;
}

export type SendFn = (msg: NodeMessage | (NodeMessage | NodeMessage[] | null)[] | null) => void;
export type DoneFn = (err?: Error) => void;

export interface NodeStatus {
  fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  shape?: 'ring' | 'dot';
  text?: string;
}

export interface NodeConfig {
  id: string;
  type: string;
  name?: string;
  z?: string;
  [property: string]: any;
}

export interface ContextStore {
  get(key: string, store?: string, cb?: (err: Error | null, value: unknown) => void): unknown;
  set(key: string, value: unknown, store?: string, cb?: (err: Error | null) => void): void;
}

export interface Node {
  id: string;
  type: string;
  name?: string;
  z?: string;
  credentials?: Record<string, string | undefined>;
  on(event: 'input', listener: (msg: NodeMessage, send: SendFn, done: DoneFn) => void): void;
  on(event: 'close', listener: (removed: boolean, done: () => void) => void): void;
  on(event: string, listener: (...args: any[]) => void): void;
  status(status: NodeStatus | Record<string, never>): void;
  send(msg: NodeMessage | (NodeMessage | NodeMessage[] | null)[] | null): void;
  error(err: unknown, msg?: NodeMessage): void;
  warn(message: unknown): void;
  log(message: unknown): void;
  debug(message: unknown): void;
  receive(msg: NodeMessage): void;
  context(): { get: ContextStore['get']; set: ContextStore['set']; flow: ContextStore; global: ContextStore };
}

export interface AdminRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: any;
}

export interface AdminResponse {
  json(body: unknown): void;
  status(code: number): AdminResponse;
}

export type AdminHandler = (req: AdminRequest, res: AdminResponse) => void;

export interface Red {
  nodes: {
    createNode(node: unknown, config: NodeConfig): void;
    registerType(type: string, ctor: (this: any, config: NodeConfig) => void, options?: { credentials?: Record<string, { type: 'text' | 'password' }> }): void;
    getNode(id: string): unknown;
    getCredentials(id: string): Record<string, string | undefined> | undefined;
  };
  util: {
    evaluateNodeProperty(value: unknown, type: string, node: Node, msg: NodeMessage, cb: (err: Error | null, result: unknown) => void): void;
    cloneMessage<T>(msg: T): T;
    getMessageProperty(msg: NodeMessage, expr: string): unknown;
  };
  httpAdmin: {
    get(path: string, ...handlers: unknown[]): void;
    post(path: string, ...handlers: unknown[]): void;
  };
  auth: { needsPermission(permission: string): unknown };
  settings: Record<string, any>;
  log: { info(m: unknown): void; warn(m: unknown): void; error(m: unknown): void; debug(m: unknown): void };
  _: (key: string, substitutions?: Record<string, unknown>) => string;
}

/** Narrow the runtime's `this` in a node constructor. */
export function asNode(self: unknown): Node {
  return self as Node;
}
