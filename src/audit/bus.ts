import { EventEmitter } from 'events';

import type { AuditRecord } from './record';

/** Every record of every chain of this process, once it is on disk (the lh-audit node listens here). */
export const auditBus = new EventEmitter();
auditBus.setMaxListeners(0);

export function onAuditRecord(listener: (record: AuditRecord) => void): () => void {
  auditBus.on('record', listener);
  return () => auditBus.off('record', listener);
}
