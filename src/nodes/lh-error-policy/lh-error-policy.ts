/** lh-error-policy: wiring only (issue 30 point 3); the node's behaviour is ErrorPolicyNode (policy-node.ts). */
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { ErrorPolicyNode } from './policy-node';

export = function register(RED: Red): void {
  /** per policy node id: the coordinated defaults only this replica had when its node closed (a redeploy) */
  const keptOverRedeploy = new Map<string, string[]>();

  function LhErrorPolicy(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    const policy = new ErrorPolicyNode(RED, node, config, keptOverRedeploy);
    node.on('input', (msg: NodeMessage, send, done) => policy.input(msg, send, done));
    node.on('close', (removed: boolean, done: () => void) => policy.close(removed, done));
  }

  RED.nodes.registerType('lh-error-policy', LhErrorPolicy);
};
