import { ID_TYPES, oneOf, seconds, showRowsFor, typedId } from '../../editor/fields';
import { operationLabel, registerNode } from '../../editor/register';

const OPERATIONS = ['msg', 'start', 'pause', 'resume', 'abort', 'cleanup', 'status', 'protocols', 'validate'];

registerNode('lh-run', {
  icon: 'lh-run.svg',
  rules: {
    operation: { validate: oneOf(OPERATIONS, 'lh-run.errors.choice') },
    protocolId: { validate: typedId('protocolId', 0, 'lh-run.errors.id') },
    simulate: { validate: oneOf(['msg', 'true', 'false']) },
    timeout: { validate: seconds(0, 'lh-run.errors.seconds', true) },
    pollInterval: { validate: seconds(0, 'lh-run.errors.seconds', true) },
  },
  typed: { protocolId: { type: 'num', types: ID_TYPES } },
  label: operationLabel(),
  prepare() {
    showRowsFor('#node-input-operation', { '.lh-run-row-protocol': ['start', 'validate'], '.lh-run-row-start': ['start'] });
  },
});
