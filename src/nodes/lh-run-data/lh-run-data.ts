import { validationError } from '../../client';
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { resolveOperation, resolveSetting } from '../shared/typed-inputs';

const DATA_OPERATIONS = ['list', 'get', 'report', 'pipetting-csv'] as const;
type DataOperation = (typeof DATA_OPERATIONS)[number];

function dataOperation(value: unknown): DataOperation {
  if (typeof value === 'string' && (DATA_OPERATIONS as readonly string[]).includes(value)) return value as DataOperation;
  throw validationError('lh-run-data', 'operation', `must be one of ${DATA_OPERATIONS.join(', ')}`, value);
}

export = function register(RED: Red): void {
  function LhRunData(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    runOperationNode(RED, node, config, async ({ client, msg }) => {
      const operation = dataOperation(resolveOperation(msg, config.operation, DATA_OPERATIONS, 'lh-run-data'));
      const runId = async (): Promise<unknown> => {
        const id = await resolveSetting(RED, node, msg, 'runId', config.runId, config.runIdType);
        if (id === undefined || id === null || id === '') {
          throw validationError(
            `lh-run-data ${operation}`,
            'runId',
            'is required: set it in the dialog or in msg.runId (lh-run-watch gives it)',
          );
        }
        return id;
      };
      switch (operation) {
        case 'list': {
          const records = await client.runs.listRunData();
          return { payload: records, status: { key: 'count', subs: { count: records.length } } };
        }
        case 'get': {
          const id = await runId();
          const [record, machine] = await Promise.all([client.runs.getRunData(id), client.machine.identity()]);
          return { payload: record, extra: { runId: String(id), machine } };
        }
        case 'report':
        case 'pipetting-csv': {
          const id = await runId();
          const file = operation === 'report' ? await client.runs.runReport(id) : await client.runs.pipettingCsv(id);
          return {
            payload: file.data,
            status: { key: 'lh-run-data.status.file', subs: { filename: file.filename ?? '', size: file.data.length } },
            extra: { runId: String(id), filename: file.filename, contentType: file.contentType.split(';')[0] },
          };
        }
      }
    });
  }
  RED.nodes.registerType('lh-run-data', LhRunData);
};
