import { EventEmitter } from 'events';

import type { AuditRecord } from './record';

/** Every record of every chain of this process, once it is on disk (the lh-audit node listens here). */
export const auditBus = new EventEmitter();
auditBus.setMaxListeners(0);

export function onAuditRecord(listener: (record: AuditRecord) => void): () => void {
  auditBus.on('record', listener);
  return () => auditBus.off('record', listener);
}

/** Why a chain refuses to record (so nothing is sent), or what it found missing when it opened: for statuses and logs. */
export interface AuditProblem {
  instrument: string;
  /**
   * 'refusing': nothing more is recorded (or sent) until the chain is reopened; 'gap': it went on after records missing;
   * 'checkpoint': it had records but no checkpoint when it opened (deleted while no writer ran), and went on with a new one
   */
  kind: 'refusing' | 'gap' | 'checkpoint';
  message: string;
}

export function onAuditProblem(listener: (problem: AuditProblem) => void): () => void {
  auditBus.on('problem', listener);
  return () => auditBus.off('problem', listener);
}
