/**
 * The set-up of the run-control review tests (review46, review52): an lh-run taking its operation from the msg, whose
 * lh-server reaches the simulator through a LossyProxy (so a test decides which reply is lost), made fresh for each
 * test and stopped after it.
 */
import { LossyProxy } from '../reliability/lossy-proxy';
import { type LoadedNode, loadNode, useInstrument } from '../support/node-suite';

type Sim = ReturnType<typeof useInstrument>;

export class RunBehindProxy {
  /** the current test's proxy and node, made before each test */
  proxy!: LossyProxy;
  node!: LoadedNode;

  constructor(readonly sim: Sim) {}
}

export function useRunBehindLossyProxy(simulationSpeed: number): RunBehindProxy {
  // the proxy stopped after each test (after the node's flow): `current` is made before any test runs
  const sim = useInstrument({ simulator: { simulationSpeed }, afterEach: () => current.proxy.stop() });
  const current = new RunBehindProxy(sim);
  beforeEach(async function () {
    current.proxy = new LossyProxy({ target: sim.baseUrl });
    await current.proxy.start();
    current.node = await loadNode(
      sim,
      { id: 'run', type: 'lh-run', operation: 'msg' },
      { only: ['lh-server', 'lh-run'], server: { config: { baseUrl: `${current.proxy.url}/` } } },
    );
  });
  return current;
}
