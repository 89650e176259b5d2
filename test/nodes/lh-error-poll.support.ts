import path from 'path';
import { Simulator } from '../../src/simulator';
import { helper, packageNodes, runtimeModule, serverFlow, ServerFlowOptions, tlsConfigNode } from '../support/runtime';

/** The compiled seen-error memory, the same module instance the runtime loaded (a Node-RED restart = forgetAllWatches). */
export const seenErrors = require(path.resolve(__dirname, '..', '..', 'nodes', 'nodes', 'lh-error-poll', 'seen-errors.js')) as {
  forgetAllWatches(): void;
};

type Msg = Record<string, unknown>;
interface Listenable {
  on(event: string, l: (arg: Msg) => void): unknown;
  removeListener(event: string, l: (arg: Msg) => void): unknown;
}

/** Resolves once `node` has set its status `n` more times (the poll node sets it once per finished poll). */
export function statusCalls(id: string, n: number, timeoutMs = 15000): Promise<void> {
  const node = helper.getNode(id) as unknown as Listenable;
  return new Promise((resolve, reject) => {
    let seen = 0;
    const timer = setTimeout(() => {
      node.removeListener('call:status', count);
      reject(new Error(`${id}: only ${seen} of ${n} status updates within ${timeoutMs} ms`));
    }, timeoutMs);
    function count(): void {
      if (++seen < n) return;
      clearTimeout(timer);
      node.removeListener('call:status', count);
      resolve();
    }
    node.on('call:status', count);
  });
}

/** Resolves with the first message a helper node receives that matches `test`. */
export function messageWhere(id: string, test: (msg: Msg) => boolean, timeoutMs = 15000): Promise<Msg> {
  const node = helper.getNode(id) as unknown as Listenable;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      node.removeListener('input', check);
      reject(new Error(`${id}: no matching message within ${timeoutMs} ms`));
    }, timeoutMs);
    function check(msg: Msg): void {
      if (!test(msg)) return;
      clearTimeout(timer);
      node.removeListener('input', check);
      resolve(msg);
    }
    node.on('input', check);
  });
}

/** The number of active timers (setTimeout/setInterval) of the process. */
export function activeTimeouts(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

/**
 * serverFlow() of test/support/runtime.ts, with `cert` and `key` set on its tls-config node: the core
 * tls-config node calls n.cert.trim() and throws without them (reported; runtime.ts is not ours to edit).
 */
export function bServerFlow(sim: Simulator, options: ServerFlowOptions = {}): ReturnType<typeof serverFlow> {
  const flow = serverFlow(sim, options);
  for (const n of flow.nodes) if (n.type === 'tls-config') Object.assign(n, { cert: n.cert ?? '', key: n.key ?? '' });
  return flow;
}

const hooks = runtimeModule<{ hooks: unknown }>('@node-red/util').hooks as {
  add(name: string, fn: (event: { destination: { id: string }; msg: Msg }) => void): void;
  remove(name: string): void;
};

/**
 * Every message delivered to the node `id` from now on, across redeploys (a Node-RED hook, so nothing is missed
 * between a deploy and the moment a test could attach to the new helper node). Stop with stopRecording().
 */
export function recordDeliveries(id: string): Msg[] {
  const seen: Msg[] = [];
  const label = `lhtest${id.replace(/[^A-Za-z0-9]/g, '')}${labels.length}`;
  labels.push(label);
  hooks.add(`preDeliver.${label}`, (event) => {
    if (event.destination.id === id) seen.push(event.msg);
  });
  return seen;
}

const labels: string[] = [];

export function stopRecording(): void {
  for (const label of labels.splice(0)) hooks.remove(`*.${label}`);
}

const changeNode = require(path.join(path.dirname(require.resolve('@node-red/nodes/package.json')), 'core', 'function', '15-change.js')) as (
  RED: unknown,
) => void;

/** loadFlow() plus the core change node, for flows that add one property the way users do. */
export async function loadFlowWithChange(flow: Record<string, unknown>[], credentials: Record<string, Record<string, string>>): Promise<void> {
  await helper.load([tlsConfigNode, ...packageNodes(), changeNode], flow, credentials);
}

/** A change node setting msg[property] to a JSON value. */
export function setProperty(id: string, property: string, value: unknown, wires: string[]): Record<string, unknown> {
  return {
    id,
    type: 'change',
    rules: [{ t: 'set', p: property, pt: 'msg', to: JSON.stringify(value), tot: 'json' }],
    wires: [wires],
  };
}

/** helper.settings(), which the helper's type declarations leave out. */
export function runtimeSettings(settings: Record<string, unknown>): void {
  (helper as unknown as { settings(s: Record<string, unknown>): void }).settings(settings);
}
