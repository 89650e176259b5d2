import { AuditRecord, onAuditRecord } from '../../audit';
import { asNode, NodeConfig, Red } from '../shared/node-red';
import { isServerNode } from '../shared/server-node';
import { Status } from '../shared/status';

/**
 * lh-audit: sends every audit record of this Node-RED (or of one lh-server node's instrument) into the flow once it is
 * on disk, to pass on to the lab's own database or SIEM with core nodes. The records are already redacted.
 */
export = function register(RED: Red): void {
  function LhAudit(this: unknown, config: NodeConfig): void {
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    const status = new Status(node, RED);
    const serverId = typeof config.server === 'string' ? config.server : '';
    const selectedInstrumentKey = (): string | undefined => {
      if (serverId === '') return undefined;
      const server = RED.nodes.getNode(serverId);
      return isServerNode(server) ? server.instrumentKey : '\u0000none';
    };
    let count = 0;
    const stop = onAuditRecord((record: AuditRecord) => {
      const instrument = selectedInstrumentKey();
      if (instrument !== undefined && record.instrument !== instrument) return;
      if (record.phase === 'file') return;
      count++;
      const operation = record.phase === 'intent' ? record.what.operation : record.operation;
      node.send({ topic: `${record.phase}/${operation}`, payload: record });
      status.ok('records', { count });
    });
    node.on('close', () => stop());
  }
  RED.nodes.registerType('lh-audit', LhAudit);
};
