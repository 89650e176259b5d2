/**
 * The frame of the lh-run node tests: a simulator at 1000× speed (useInstrument()) and an lh-run node 'run' (50 ms
 * polls, 5 s timeout) whose configuration each test sets, loaded with lh-server and lh-run alone.
 */
import type { Simulator } from '../../src/simulator';
import { restartMemory } from '../support/homes';
import { ConfiguredNode, configuredNode, useInstrument } from '../support/node-suite';

export function useRunNode(): ConfiguredNode & { sim: Simulator } {
  // each test starts as after a restart of Node-RED: a create left unanswered by one (a reset) holds no other's start
  const sim = useInstrument({ simulator: { simulationSpeed: 1000 }, afterEach: () => restartMemory() });
  const node = configuredNode(
    sim,
    { id: 'run', type: 'lh-run', pollInterval: '0.05', timeout: '5' },
    { only: ['lh-server', 'lh-run'] },
  );
  return { sim, ...node };
}
