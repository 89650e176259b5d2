import { LhError, type RunStatus, validate as v, validationError } from '../../client';
import { type ProtocolRef, protocolRef, resolveProtocolName } from '../../client';
import { migrateConfig } from '../shared/migrations';
import { asNode, type Node, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { type OperationResult, runOperationNode } from '../shared/operation-node';
import { resolveOperation, resolveSetting } from '../shared/typed-inputs';
import { loadOverrides, startRun } from './start-run';

const RUN_OPERATIONS = ['start', 'pause', 'resume', 'abort', 'cleanup', 'status', 'protocols', 'validate'] as const;
type RunOperation = (typeof RUN_OPERATIONS)[number];

const DEFAULT_TIMEOUT_S = 300;
const DEFAULT_POLL_S = 1;
const MIN_POLL_MS = 50;

function runOperation(value: unknown): RunOperation {
  if (typeof value === 'string' && (RUN_OPERATIONS as readonly string[]).includes(value)) return value as RunOperation;
  throw validationError('lh-run', 'operation', `must be one of ${RUN_OPERATIONS.join(', ')}`, value);
}

function seconds(value: unknown, fallback: number): number {
  const n = Number(value);
  return value === '' || value === undefined || value === null || !Number.isFinite(n) || n <= 0 ? fallback : n;
}

/**
 * The dialog's choice, else msg.simulate (a boolean), else false. A msg.simulate that the dialog's choice contradicts
 * is refused before anything is sent, as a msg.operation naming another operation is: a dialog set to a real run
 * would otherwise start one with hardware moving for a msg that asked for a simulation (review41).
 */
function simulateOf(config: unknown, msg: NodeMessage): boolean | undefined {
  const chosen = config === 'true' || config === true ? true : config === 'false' || config === false ? false : undefined;
  const given = msg.simulate;
  const asked = given === undefined || given === null ? undefined : v.strictBoolean(given, 'simulate', 'start-run');
  if (chosen !== undefined && asked !== undefined && asked !== chosen) {
    throw new LhError(
      `msg.simulate is ${String(asked)} but this node's Simulate is "${chosen ? 'yes' : 'no'}", chosen in its dialog: ` +
        'nothing was sent (choose "from msg.simulate" in the dialog to take it from the msg, or remove msg.simulate)',
      { kind: 'validation', operation: 'start-run', field: 'simulate' },
    );
  }
  return chosen ?? asked;
}

/** A sleep that the node's close cuts short with an error, so a waiting start does not outlive its flow. */
class Sleeper {
  private readonly pending = new Map<NodeJS.Timeout, (err: Error) => void>();
  private closed = false;

  /** whether the node was closed: a start checks it before each write to the instrument */
  stopped = (): boolean => this.closed;

  sleep = (ms: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (this.closed) return reject(new LhError('the lh-run node was stopped', { kind: 'config', operation: 'start-run' }));
      const t = setTimeout(() => {
        this.pending.delete(t);
        resolve();
      }, ms);
      this.pending.set(t, reject);
    });

  close(): void {
    this.closed = true;
    for (const [t, reject] of this.pending) {
      clearTimeout(t);
      reject(new LhError('the lh-run node was stopped while waiting for the run', { kind: 'config', operation: 'start-run' }));
    }
    this.pending.clear();
  }
}

/** msg.runId with msg.confirmLoading: text or a number, the run id of the run left at Loading; else ignored. */
function confirmRunIdOf(msg: NodeMessage, confirmLoading: boolean): string | undefined {
  const given = msg.runId;
  if (!confirmLoading || given === undefined || given === null || given === '') return undefined;
  if (typeof given === 'string' || (typeof given === 'number' && Number.isFinite(given))) return String(given);
  throw validationError('start-run', 'runId', 'must be text or a number (the run id of the run left at Loading)', given);
}

function statusResult(status: RunStatus, extra: Record<string, unknown> = {}): OperationResult {
  return {
    payload: status,
    status: { key: 'lh-run.status.state', subs: { state: status.protocolRunState, protocol: status.protocolName ?? '' } },
    extra: { state: status.protocolRunState, ...extra },
  };
}

export = function register(RED: Red): void {
  function LhRun(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node: Node = asNode(this);
    const sleeper = new Sleeper();
    const timeoutMs = seconds(config.timeout, DEFAULT_TIMEOUT_S) * 1000;
    const pollMs = Math.max(MIN_POLL_MS, seconds(config.pollInterval, DEFAULT_POLL_S) * 1000);

    async function protocolOf(msg: NodeMessage, required: boolean): Promise<ProtocolRef | undefined> {
      const filled = (x: unknown): boolean => x !== undefined && x !== null && x !== '';
      if (filled(config.protocolId)) {
        return protocolRef(
          await resolveSetting(RED, node, msg, 'protocolId', config.protocolId, config.protocolIdType),
          undefined,
          'lh-run',
        );
      }
      if (filled(config.protocolName)) {
        return protocolRef(undefined, await resolveSetting(RED, node, msg, 'protocolName', config.protocolName, 'str'), 'lh-run');
      }
      if (!required && !filled(msg.protocolId) && !filled(msg.protocolName)) return undefined;
      return protocolRef(msg.protocolId, msg.protocolName, 'lh-run');
    }

    runOperationNode(RED, node, config, async ({ client, msg, status }) => {
      const operation = runOperation(resolveOperation(msg, config.operation, RUN_OPERATIONS, 'lh-run'));
      const runs = client.runs;
      switch (operation) {
        case 'start': {
          // before any request: a contradiction sends nothing; undefined: neither the dialog nor the msg asks a mode
          const asked = simulateOf(config.simulate, msg);
          const confirmLoading =
            msg.confirmLoading === undefined ? false : v.strictBoolean(msg.confirmLoading, 'confirmLoading', 'start-run');
          const protocol = await protocolOf(msg, !confirmLoading);
          const result = await startRun(runs, {
            protocol,
            simulate: asked ?? false,
            simulateAsked: asked,
            stopAtLoading: config.stopAtLoading === true || config.stopAtLoading === 'true',
            confirmLoading,
            loadOverrides: loadOverrides(msg.payload),
            pollMs,
            timeoutMs,
            sleep: sleeper.sleep,
            stopped: sleeper.stopped,
            readiness: () => client.machine.startReadiness(),
            claim: (what) => client.runStarts.claim(what, 'start-run'),
            loadingMemory: {
              get: () => client.runStarts.atLoading(),
              set: (protocolId, runId) => client.runStarts.leftAtLoading(protocolId, runId),
              forget: () => client.runStarts.forgetLoading(),
            },
            confirmRunId: confirmRunIdOf(msg, confirmLoading),
            onPhase: (phase) => status.busy(`lh-run.status.${phase}`),
          });
          const extra = {
            state: result.status.protocolRunState,
            outcome: result.outcome,
            protocolId: result.protocolId,
            protocolName: result.protocolName,
            runId: result.runId,
          };
          if (result.outcome === 'loading') {
            return {
              payload: result.loadInstructions,
              status: { key: 'lh-run.status.waitingForLoading', subs: { protocol: result.protocolName } },
              extra: { ...extra, runStatus: result.status },
            };
          }
          return { ...statusResult(result.status), extra };
        }
        case 'pause':
          await runs.pause();
          return statusResult(await runs.status());
        case 'resume':
          await runs.resume();
          return statusResult(await runs.status());
        case 'abort':
          await runs.abort();
          return statusResult(await runs.status());
        case 'cleanup':
          await runs.cleanupUnloading();
          return statusResult(await runs.status());
        case 'status':
          return statusResult(await runs.status());
        case 'protocols': {
          const names = await runs.protocolNames();
          return { payload: names, status: { key: 'count', subs: { count: names.length } } };
        }
        case 'validate': {
          const ref = (await protocolOf(msg, true)) as ProtocolRef;
          const id =
            'id' in ref ? ref.id : resolveProtocolName(ref.name, await runs.protocolNames(), 'validate-protocol').protocolId;
          const validation = await runs.validateProtocol(id);
          return {
            payload: validation,
            status: { key: validation.isValid ? 'lh-run.status.valid' : 'lh-run.status.invalid' },
            extra: { protocolId: id, isValid: validation.isValid },
          };
        }
      }
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      sleeper.close();
      done();
    });
  }
  RED.nodes.registerType('lh-run', LhRun);
};
