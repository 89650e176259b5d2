import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';

export = function register(RED: Red): void {
  function LhClearErrors(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    runOperationNode(RED, asNode(this), config, async ({ client }) => {
      const result = await client.prep.clearErrors();
      const counts = {
        numberOfErrorsCleared: result?.numberOfErrorsCleared ?? 0,
        numberOfErrorsNotCleared: result?.numberOfErrorsNotCleared ?? 0,
      };
      return {
        payload: counts,
        status: { key: 'cleared', subs: { cleared: counts.numberOfErrorsCleared, notCleared: counts.numberOfErrorsNotCleared } },
      };
    });
  }
  RED.nodes.registerType('lh-clear-errors', LhClearErrors);
};
