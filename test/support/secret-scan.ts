/**
 * A mocha root-hook plugin (registered in .mocharc.json): records every msg, status, log line and error that a
 * node of this package emits in any test (by wrapping the Node-RED runtime's Node.prototype, the class every node
 * instance is made of) and fails the run in an afterAll if one of them contains a password used by the tests or
 * a JWT. The simulator's request log (the instrument side) is not scanned: it holds Authorization headers.
 *
 * The other channels a secret could leave by are watched the same way, for the same secrets and for every secret a
 * node of the run was given in its credentials (a password, token, link secret, tls passphrase: learned as Node-RED
 * hands a node its credentials):
 * - every HTTP answer of Node-RED's own web apps (httpAdmin: the editor endpoints, the metrics page; httpNode: the
 *   answer page), its body and its Location header (the simulator's own servers are not express apps: not scanned);
 * - every file written (fs writeFile/appendFile and FileHandle writes: audit files, seen-error files, link keys),
 *   except Node-RED's credentials file and the runtime's own config and session files;
 * - every command sent to Redis (ioredis), except AUTH/HELLO/ACL/CONFIG, which carry the password on purpose;
 * - the whole keyspace of each test Redis before the harness stops it (scanRedisKeyspace): what Node-REDs in child
 *   processes wrote, whose commands this process never sees.
 */
import fs from 'fs';
import http from 'http';
import path from 'path';
import { inspect } from 'util';

import { isSecretName } from '../../src/contract/redaction';

/** Passwords the tests give lh-server nodes (distinctive ones; 'x' or 'wrong' would match ordinary text). */
const PASSWORDS = ['labwire', 'guess-1', 'longenough', 'right-one', 'secret1', 'wrong-pw-', 'smtp-secret-93', 'typed-7'];
/**
 * A JWT: base64url JSON, a dot, base64url JSON, whose first part is a JOSE header (every JWT's names its `alg`, RFC
 * 7515). The header check keeps out the answer page's signed links, base64url JSON claims then a base64url HMAC: one
 * HMAC in 262,144 begins with `eyJ` too, and such a link in a msg or a page made the run fail by chance.
 */
function jwtIn(text: string): RegExpExecArray | null {
  const candidates = /eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}/g;
  for (let m = candidates.exec(text); m !== null; m = candidates.exec(text)) {
    try {
      const header: unknown = JSON.parse(Buffer.from(m[0].split('.')[0], 'base64url').toString('utf8'));
      if (typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string') return m;
    } catch {
      // not JSON: not a JOSE header
    }
  }
  return null;
}

/** `labwire` is also the package scope (@labwire/...): only the bare word counts. */
const PATTERNS: { exec(text: string): RegExpExecArray | null }[] = [
  ...PASSWORDS.map((p) => (p === 'labwire' ? /(?<![@\w])labwire(?![/\w-])/ : new RegExp(p.replace(/[-]/g, '\\-')))),
  { exec: jwtIn },
];

/** Whether the scan would take `text` for a leak (a test password, a JWT, a secret learned so far); records nothing. */
export function holdsSecret(text: string): boolean {
  return [...PATTERNS, { exec: learnedIn }].some((p) => p.exec(text) !== null);
}

/** Tests that put a secret into a msg on purpose (none today): `${node type}:${what}` prefixes. */
const EXCLUDED: string[] = [];

interface Finding {
  what: string;
  node: string;
  test: string;
  excerpt: string;
}

const findings: Finding[] = [];
/** How many texts each channel had scanned (for the scan's own test, and LH_SECRET_SCAN_COUNTS=1). */
const scannedBy: Record<string, number> = {};
let recorded = 0;
let currentTest = '(outside a test)';

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return `${value.message}\n${inspect(value, { depth: 4 })}`;
  try {
    return inspect(value, { depth: 8, maxArrayLength: 200, maxStringLength: 20000, breakLength: Infinity });
  } catch {
    return String(value);
  }
}

/**
 * Secrets Node-RED handed a node of this run in its credentials (secret-named fields only, 6 characters or more: a
 * test's 'x' would match ordinary text), as is and JSON-escaped.
 */
const learned = new Set<string>();
const MIN_LEARNED = 6;

function learn(credentials: unknown): void {
  if (typeof credentials !== 'object' || credentials === null) return;
  for (const [name, value] of Object.entries(credentials as Record<string, unknown>)) {
    if (typeof value !== 'string' || value.length < MIN_LEARNED || !isSecretName(name)) continue;
    learned.add(value);
    learned.add(JSON.stringify(value).slice(1, -1));
  }
}

function learnedIn(text: string): RegExpExecArray | null {
  for (const secret of learned) {
    const at = text.indexOf(secret);
    if (at < 0) continue;
    const m = [secret] as unknown as RegExpExecArray;
    m.index = at;
    return m;
  }
  return null;
}

function scan(what: string, node: { type?: string; id?: string }, args: unknown[]): void {
  if (typeof node.type !== 'string' || !node.type.startsWith('lh-')) return;
  recorded++;
  scanText(what, `${node.type} ${node.id ?? ''}`, node.type, args.map(textOf).join(' '));
}

/** One text leaving by a channel (`what`) from `source` (`tag` for EXCLUDED): a finding per secret pattern in it. */
/**
 * The simulator's login as the README and every example's comment node publish it for a newcomer ("type user admin,
 * password `labwire`"): the tests log in with it, so it is learned, but a flow export that shows the comment is no leak.
 */
const PUBLISHED = 'password `labwire`';

function scanText(what: string, source: string, tag: string, given: string): void {
  scannedBy[what] = (scannedBy[what] ?? 0) + 1;
  const text = given.includes(PUBLISHED) ? given.split(PUBLISHED).join('password (published)') : given;
  for (const pattern of [...PATTERNS, { exec: learnedIn }]) {
    const m = pattern.exec(text);
    if (!m) continue;
    if (EXCLUDED.some((e) => `${tag}:${what}`.startsWith(e))) continue;
    const at = m.index;
    findings.push({
      what,
      node: source,
      test: currentTest,
      excerpt: text.slice(Math.max(0, at - 60), at + 20).replace(m[0], '<SECRET>'),
    });
  }
}

type Method = (this: { type?: string; id?: string }, ...args: unknown[]) => unknown;

function wrapRuntime(pkg: string): void {
  let nodeModule: { prototype: Record<string, Method> };
  try {
    const dir = path.dirname(require.resolve(`${pkg}/package.json`));
    nodeModule = require(require.resolve('@node-red/runtime/lib/nodes/Node', { paths: [dir] })) as {
      prototype: Record<string, Method>;
    };
  } catch {
    return; // that runtime is not installed
  }
  try {
    const dir = path.dirname(require.resolve(`${pkg}/package.json`));
    const credentials = require(require.resolve('@node-red/runtime/lib/nodes/credentials', { paths: [dir] })) as {
      get?: (id: string) => unknown;
    };
    const get = credentials.get;
    if (typeof get === 'function' && !(get as { __lhSecretScan?: boolean }).__lhSecretScan) {
      const learning = function (this: unknown, id: string): unknown {
        const found = get.call(this, id);
        learn(found);
        return found;
      };
      (learning as { __lhSecretScan?: boolean }).__lhSecretScan = true;
      credentials.get = learning;
    }
  } catch {
    // that runtime has no credentials module where expected: its nodes' secrets are not learned
  }
  const proto = nodeModule.prototype;
  if ((proto as unknown as { __lhSecretScan?: boolean }).__lhSecretScan) return;
  (proto as unknown as { __lhSecretScan?: boolean }).__lhSecretScan = true;
  for (const name of ['send', 'status', 'log', 'warn', 'error', 'debug', 'trace']) {
    const original = proto[name];
    if (typeof original !== 'function') continue;
    proto[name] = function (this: { type?: string; id?: string }, ...args: unknown[]): unknown {
      scan(name, this, args);
      return original.apply(this, args);
    };
  }
}

wrapRuntime('node-red');
wrapRuntime('node-red-3');

/** Longest part of one HTTP answer or file write that is read (an editor bundle is megabytes of script). */
const MAX_SCANNED = 256 * 1024;

function chunkText(chunk: unknown): string | undefined {
  if (typeof chunk === 'string') return chunk.slice(0, MAX_SCANNED);
  if (chunk instanceof Uint8Array)
    return Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.length, MAX_SCANNED)).toString();
  return undefined;
}

/** Answers of express apps only (Node-RED's httpAdmin and httpNode): `res.app` is set by express. */
interface ScannedResponse extends http.ServerResponse {
  app?: unknown;
  req: http.IncomingMessage;
}

const NOT_TEXT = /^(?:image|font|audio|video)\/|javascript|css|octet-stream/i;

function scanResponse(res: ScannedResponse, chunk: unknown): void {
  if (res.app === undefined) return;
  const type = String(res.getHeader('content-type') ?? '');
  const location = res.getHeader('location');
  const where = `HTTP ${res.req?.method ?? ''} ${(res.req?.url ?? '').split('?')[0]}`;
  if (typeof location === 'string') scanText('location header', where, 'http', location);
  if (NOT_TEXT.test(type)) return;
  const text = chunkText(chunk);
  if (text !== undefined && text !== '') scanText('http answer', where, 'http', text);
}

function wrapHttp(): void {
  const proto = http.ServerResponse.prototype as unknown as Record<string, (...args: unknown[]) => unknown> & {
    __lhSecretScan?: boolean;
  };
  if (proto.__lhSecretScan) return;
  proto.__lhSecretScan = true;
  for (const name of ['write', 'end']) {
    const original = proto[name];
    proto[name] = function (this: ScannedResponse, ...args: unknown[]): unknown {
      if (typeof args[0] !== 'function') scanResponse(this, args[0]);
      return original.apply(this, args);
    };
  }
}

/** Files the runtime keeps its own secrets in on purpose (credentials, its config and admin sessions). */
const RUNTIME_FILES = /(?:_cred[^/\\]*\.json|[/\\]\.config[^/\\]*\.json|[/\\]\.sessions\.json)(?:\.backup)?$/;

function scanWrite(file: unknown, data: unknown): void {
  const name =
    typeof file === 'string' ? file : file instanceof URL ? file.pathname : Buffer.isBuffer(file) ? file.toString() : '';
  if (RUNTIME_FILES.test(name)) return;
  const text = chunkText(data);
  if (text !== undefined && text !== '')
    scanText('file write', `file ${path.basename(name) || '(a file descriptor)'}`, 'file', text);
}

/** Where each FileHandle opened by fs.promises.open points (a handle does not say). */
const handlePaths = new WeakMap<object, string>();

function wrapFs(): void {
  const fsAny = fs as unknown as Record<string, (...args: unknown[]) => unknown> & { __lhSecretScan?: boolean };
  if (fsAny.__lhSecretScan) return;
  fsAny.__lhSecretScan = true;
  for (const name of ['writeFileSync', 'writeFile', 'appendFileSync', 'appendFile']) {
    const original = fsAny[name];
    fsAny[name] = function (this: unknown, ...args: unknown[]): unknown {
      scanWrite(args[0], args[1]);
      return original.apply(this, args);
    };
  }
  // the audit file's synchronous appends: fs.writeSync on a descriptor fs.openSync gave
  const fdPaths = new Map<number, string>();
  const openSync = fsAny.openSync;
  fsAny.openSync = function (this: unknown, ...args: unknown[]): unknown {
    const fd = openSync.apply(this, args);
    if (typeof fd === 'number' && typeof args[0] === 'string') fdPaths.set(fd, args[0]);
    return fd;
  };
  const writeSync = fsAny.writeSync;
  fsAny.writeSync = function (this: unknown, ...args: unknown[]): unknown {
    if (typeof args[0] === 'number') scanWrite(fdPaths.get(args[0]) ?? '', args[1]);
    return writeSync.apply(this, args);
  };
  const promises = fs.promises as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of ['writeFile', 'appendFile']) {
    const original = promises[name];
    promises[name] = function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const file = args[0];
      scanWrite(typeof file === 'object' && file !== null && handlePaths.has(file) ? handlePaths.get(file) : file, args[1]);
      return original.apply(this, args);
    };
  }
  const open = promises.open;
  let handleWrapped = false;
  promises.open = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
    const handle = (await open.apply(this, args)) as Record<string, (...a: unknown[]) => unknown>;
    if (typeof args[0] === 'string') handlePaths.set(handle, args[0]);
    if (!handleWrapped) {
      handleWrapped = true;
      const proto = Object.getPrototypeOf(handle) as Record<string, (...a: unknown[]) => unknown>;
      for (const name of ['write', 'writeFile', 'appendFile', 'writev']) {
        const original = proto[name];
        if (typeof original !== 'function') continue;
        proto[name] = function (this: object, ...a: unknown[]): unknown {
          const data = name === 'writev' && Array.isArray(a[0]) ? Buffer.concat(a[0] as Uint8Array[]) : a[0];
          scanWrite(handlePaths.get(this) ?? '', data);
          return original.apply(this, a);
        };
      }
    }
    return handle;
  };
}

/** Commands that carry the Redis password on purpose. */
const REDIS_AUTH = new Set(['auth', 'hello', 'acl', 'config']);

function wrapRedis(): void {
  let command: { prototype: Record<string, (...args: unknown[]) => unknown> & { __lhSecretScan?: boolean } };
  try {
    command = require(require.resolve('ioredis/built/Command')) as typeof command;
    command = (command as unknown as { default?: typeof command }).default ?? command;
  } catch {
    return;
  }
  const proto = command.prototype;
  if (proto.__lhSecretScan) return;
  proto.__lhSecretScan = true;
  const original = proto.toWritable;
  proto.toWritable = function (this: { name?: string; args?: unknown[] }, ...args: unknown[]): unknown {
    const name = String(this.name ?? '').toLowerCase();
    if (!REDIS_AUTH.has(name) && Array.isArray(this.args)) {
      const text = this.args.map((a) => chunkText(a) ?? String(a)).join(' ');
      scanText('redis command', `redis ${name}`, 'redis', text);
    }
    return original.apply(this, args);
  };
}

wrapHttp();
wrapFs();
wrapRedis();

/** Keys read per keyspace scan at most, and entries per key (a test's Redis holds a few hundred keys). */
const MAX_SCANNED_KEYS = 5000;
const MAX_ENTRIES = 1000;

/**
 * Every key and value in the Redis at `url` (strings, hashes, lists, sets, sorted sets, streams), scanned as the other
 * channels are: for what Node-RED processes of other tests' children wrote there, which the command hook of this
 * process never sees. Bounded (keys, entries, a 2 s command timeout); a Redis that does not answer is left alone.
 */
export async function scanRedisKeyspace(url: string, where: string): Promise<void> {
  const { default: Redis } = (await import('ioredis')) as unknown as { default: typeof import('ioredis').default };
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: 2000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    let cursor = '0';
    let keys = 0;
    do {
      const [next, batch] = await redis.scan(cursor, 'COUNT', 500);
      cursor = next;
      for (const key of batch) {
        if (++keys > MAX_SCANNED_KEYS) return;
        const type = await redis.type(key);
        let values: unknown;
        if (type === 'string') values = await redis.get(key);
        else if (type === 'hash') values = await redis.hgetall(key);
        else if (type === 'list') values = await redis.lrange(key, 0, MAX_ENTRIES - 1);
        else if (type === 'set') values = await redis.sscan(key, '0', 'COUNT', MAX_ENTRIES);
        else if (type === 'zset') values = await redis.zrange(key, 0, MAX_ENTRIES - 1);
        else if (type === 'stream') values = await redis.xrange(key, '-', '+', 'COUNT', MAX_ENTRIES);
        scanText('redis keyspace', `redis ${where}`, 'redis', `${key} ${textOf(values)}`);
      }
    } while (cursor !== '0');
  } catch {
    // stopped, paused or gone: nothing to read
  } finally {
    redis.disconnect();
  }
}

export const mochaHooks = {
  beforeEach(this: { currentTest?: { fullTitle(): string } }): void {
    currentTest = this.currentTest?.fullTitle() ?? currentTest;
  },
  afterAll(): void {
    if (process.env.LH_SECRET_SCAN_COUNTS) console.log('secret scan:', scannedBy, `${learned.size} learned`);
    if (findings.length === 0) return;
    const lines = findings.slice(0, 20).map((f) => `  ${f.node} ${f.what} in "${f.test}": …${f.excerpt}…`);
    throw new Error(
      `secret scan: ${findings.length} of ${recorded} msgs/status/log lines of lh-* nodes hold a password or a token:\n${lines.join('\n')}`,
    );
  },
};

/** For the scan's own test. */
export function secretScanState(): {
  recorded: number;
  findings: number;
  scan: typeof scan;
  scannedBy: Readonly<Record<string, number>>;
} {
  return { recorded, findings: findings.length, scan, scannedBy };
}
