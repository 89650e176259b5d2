import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { resolveChoice, resolveOperation } from '../shared/typed-inputs';
import { setMode, setSoftwareSettings, SETTINGS_OPERATIONS, settingsOperation } from './operations';

export = function register(RED: Red): void {
  function LhSettings(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    runOperationNode(RED, asNode(this), config, async ({ client, msg }) => {
      const operation = settingsOperation(resolveOperation(msg, config.operation, SETTINGS_OPERATIONS, 'lh-settings'));
      switch (operation) {
        case 'get-software-settings':
          return { payload: await client.prep.getSoftwareSettings(), status: { key: 'done' } };
        case 'get-policy-settings':
          return { payload: await client.prep.getPolicySettings(), status: { key: 'done' } };
        case 'set-software-settings': {
          const mode = setMode(resolveChoice(msg, 'mode', config.mode));
          const settings = await setSoftwareSettings(client.baseUrl, client.prep, msg.payload, mode);
          return { payload: settings, status: { key: 'saved' } };
        }
      }
    });
  }
  RED.nodes.registerType('lh-settings', LhSettings);
};
