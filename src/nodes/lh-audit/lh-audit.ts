import { type AuditProblem, type AuditRecord, onAuditProblem, onAuditRecord } from '../../audit';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { isServerNode } from '../shared/server-node';
import { Status } from '../shared/status';

/** The status line's reason: the cause the problem names, short (the full text is in the log and on Catch). */
function shortReason(problem: AuditProblem): string {
  if (/ENOSPC|no space/i.test(problem.message)) return 'disk full';
  if (/deleted, moved or replaced/.test(problem.message)) return 'chain file deleted';
  if (/cut short/.test(problem.message)) return 'chain file cut short';
  if (/written by someone else/.test(problem.message)) return 'chain file written by another';
  if (problem.kind === 'gap') return 'records missing';
  return 'cannot write';
}

/**
 * `intent/<operation>`, `outcome/<operation>`; a file record (the chain's first, and the first of each new file):
 * `file/opened`, or `file/gap` when it declares records missing. Every record goes to the copy, so its seqs are the
 * chain's without a hole, and a gap the chain declares is in the copy too.
 */
function recordTopic(record: AuditRecord): string {
  if (record.phase === 'file') return record.gap ? 'file/gap' : 'file/opened';
  return `${record.phase}/${record.phase === 'intent' ? record.what.operation : record.operation}`;
}

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
      count++;
      node.send({ topic: recordTopic(record), payload: record });
      status.ok('records', { count });
    });
    // a chain that refuses to record (file deleted, disk full): nothing is sent to that instrument, the status says why
    const stopProblems = onAuditProblem((problem: AuditProblem) => {
      const instrument = selectedInstrumentKey();
      if (instrument !== undefined && problem.instrument !== instrument) return;
      if (problem.kind === 'refusing')
        status.other({ fill: 'red', shape: 'ring', text: `audit refusing: ${shortReason(problem)}` });
      else if (problem.kind === 'checkpoint') status.other({ fill: 'yellow', shape: 'ring', text: 'audit checkpoint missing' });
      else status.other({ fill: 'yellow', shape: 'ring', text: `audit gap: ${shortReason(problem)}` });
    });
    node.on('close', () => {
      stop();
      stopProblems();
    });
  }
  RED.nodes.registerType('lh-audit', LhAudit);
};
