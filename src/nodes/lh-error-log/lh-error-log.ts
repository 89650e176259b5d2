import { LhError, validate as v, validationError } from '../../client';
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { isChecked, resolveOperation, resolveSetting } from '../shared/typed-inputs';
import { DEFAULT_MAX_ITEMS, DEFAULT_PAGE_SIZE, readAllPages } from './error-pages';

const OPERATIONS = ['list', 'get'] as const;
type Operation = (typeof OPERATIONS)[number];
const MAX_ITEMS_LIMIT = 100000;

function operationOf(value: unknown): Operation {
  return v.oneOf(value, OPERATIONS, 'operation', 'error-log');
}

export = function register(RED: Red): void {
  function LhErrorLog(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    runOperationNode(RED, node, config, async ({ client, msg }) => {
      const operation = operationOf(resolveOperation(msg, config.operation, OPERATIONS, 'lh-error-log'));
      if (operation === 'get') {
        const raw = await resolveSetting(RED, node, msg, 'errorId', config.errorId, config.errorIdType);
        if (raw === undefined || raw === null || raw === '') {
          throw new LhError('errorId is required to read one error: set it in the dialog or in msg.errorId', {
            kind: 'validation',
            operation: 'get-error',
            field: 'errorId',
          });
        }
        const record = await client.prep.getError(v.errorId(raw, 'errorId', 'get-error'));
        return { payload: record, status: { key: 'done' } };
      }
      const op = 'list-errors';
      const offset =
        v.optionalInt32(await resolveSetting(RED, node, msg, 'offset', config.offset, config.offsetType), 'offset', op) ?? 0;
      const limit = v.optionalInt32(
        await resolveSetting(RED, node, msg, 'limit', config.limit, config.limitType),
        'limit',
        op,
        1,
      );
      const allPages = isChecked(config.allPages);
      if (!allPages) {
        const page = await client.prep.listErrors({ offset, limit });
        const count = Array.isArray(page?.items) ? page.items.length : 0;
        return { payload: page, status: { key: 'count', subs: { count } }, extra: { totalItemCount: page?.totalItemCount } };
      }
      const maxItems =
        config.maxItems === undefined || config.maxItems === '' ? DEFAULT_MAX_ITEMS : v.int32(config.maxItems, 'maxItems', op, 1);
      if (maxItems > MAX_ITEMS_LIMIT) throw validationError(op, 'maxItems', `must be at most ${MAX_ITEMS_LIMIT}`, maxItems);
      const all = await readAllPages(client, offset, limit ?? DEFAULT_PAGE_SIZE, maxItems);
      return {
        payload: { totalItemCount: all.totalItemCount, currentOffset: all.currentOffset, items: all.items },
        status: { key: 'count', subs: { count: all.items.length } },
        extra: { totalItemCount: all.totalItemCount, truncated: all.truncated, pages: all.pages },
      };
    });
  }
  RED.nodes.registerType('lh-error-log', LhErrorLog);
};
