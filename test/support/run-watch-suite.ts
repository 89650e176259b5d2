import type { Simulator } from '../../src/simulator';
import { builtNode } from './node-suite';
import { helper, serverFlow, tlsConfigNode } from './runtime';

type Msg = Record<string, unknown>;

/** lh-run-watch's outputs, in order: the id of the helper node wired to each. */
export const RUN_WATCH_OUTPUTS = ['states', 'finished', 'progress', 'connection'] as const;

export const runWatchModules = () => [tlsConfigNode, builtNode('lh-server'), builtNode('lh-run-watch')];

/**
 * An lh-server for `sim` (interface A only) and an lh-run-watch node `watch` with `config`, a helper node on each
 * output; with `coordination` (an lh-coordination node), the lh-server joins it.
 */
export function runWatchFlow(
  sim: Simulator,
  config: Msg,
  coordination?: Msg,
): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } {
  const server = serverFlow(sim, { withB: false, ...(coordination ? { config: { coordination: coordination.id } } : {}) });
  return {
    nodes: [
      { id: 'tab', type: 'tab', label: 'runs' },
      ...(coordination ? [coordination] : []),
      ...server.nodes,
      {
        id: 'watch',
        type: 'lh-run-watch',
        z: 'tab',
        server: 'server',
        wires: RUN_WATCH_OUTPUTS.map((id) => [id]),
        ...config,
      },
      ...RUN_WATCH_OUTPUTS.map((id) => ({ id, type: 'helper', z: 'tab' })),
    ],
    credentials: server.credentials,
  };
}

/** Appends what each output's helper node receives from now on to `received[output]` (call it after each load). */
export function recordRunWatch(received: Record<string, Msg[]>): void {
  for (const id of RUN_WATCH_OUTPUTS) {
    received[id] ??= [];
    helper.getNode(id).on('input', (msg: Msg) => received[id].push(msg));
  }
}
