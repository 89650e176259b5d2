/** lh-answer-page: wiring only (issue 30 point 3); the node's behaviour is AnswerPageNode (page-node.ts). */
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { AnswerPageNode } from './page-node';

export = function register(RED: Red): void {
  function LhAnswerPage(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    const page = new AnswerPageNode(RED, node, config);
    node.on('input', (msg: NodeMessage, send, done) => page.input(msg, send, done));
    node.on('close', (removed: boolean, done: () => void) => page.close(removed, done));
  }

  RED.nodes.registerType('lh-answer-page', LhAnswerPage, { credentials: { secret: { type: 'password' } } });
};
