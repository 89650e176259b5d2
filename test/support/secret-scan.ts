/**
 * A mocha root-hook plugin (registered in .mocharc.json): records every msg, status, log line and error that a
 * node of this package emits in any test (by wrapping the Node-RED runtime's Node.prototype, the class every node
 * instance is made of) and fails the run in an afterAll if one of them contains a password used by the tests or
 * a JWT. The simulator's request log (the instrument side) is not scanned: it holds Authorization headers.
 */
import path from 'path';
import { inspect } from 'util';

/** Passwords the tests give lh-server nodes (distinctive ones; 'x' or 'wrong' would match ordinary text). */
const PASSWORDS = ['labwire', 'guess-1', 'longenough', 'right-one', 'secret1', 'wrong-pw-', 'smtp-secret-93', 'typed-7'];
/** `labwire` is also the package scope (@labwire/...): only the bare word counts. */
const PATTERNS: RegExp[] = [
  ...PASSWORDS.map((p) => (p === 'labwire' ? /(?<![@\w])labwire(?![/\w-])/ : new RegExp(p.replace(/[-]/g, '\\-')))),
  /eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}/,
];

/** Tests that put a secret into a msg on purpose (none today): `${node type}:${what}` prefixes. */
const EXCLUDED: string[] = [];

interface Finding {
  what: string;
  node: string;
  test: string;
  excerpt: string;
}

const findings: Finding[] = [];
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

function scan(what: string, node: { type?: string; id?: string }, args: unknown[]): void {
  if (typeof node.type !== 'string' || !node.type.startsWith('lh-')) return;
  recorded++;
  const text = args.map(textOf).join(' ');
  for (const pattern of PATTERNS) {
    const m = pattern.exec(text);
    if (!m) continue;
    const tag = `${node.type}:${what}`;
    if (EXCLUDED.some((e) => tag.startsWith(e))) continue;
    const at = m.index;
    findings.push({
      what,
      node: `${node.type} ${node.id ?? ''}`,
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

export const mochaHooks = {
  beforeEach(this: { currentTest?: { fullTitle(): string } }): void {
    currentTest = this.currentTest?.fullTitle() ?? currentTest;
  },
  afterAll(): void {
    if (findings.length === 0) return;
    const lines = findings.slice(0, 20).map((f) => `  ${f.node} ${f.what} in "${f.test}": …${f.excerpt}…`);
    throw new Error(
      `secret scan: ${findings.length} of ${recorded} msgs/status/log lines of lh-* nodes hold a password or a token:\n${lines.join('\n')}`,
    );
  },
};

/** For the scan's own test. */
export function secretScanState(): { recorded: number; findings: number; scan: typeof scan } {
  return { recorded, findings: findings.length, scan };
}
