import { ID_TYPES, oneOf, typedId } from '../../editor/fields';
import { operationLabel, registerNode } from '../../editor/register';

registerNode('lh-protocol', {
  icon: 'lh-protocol.svg',
  rules: {
    operation: { validate: oneOf(['msg', '', 'export', 'plan', 'apply', 'validate'], 'lh-protocol.errors.choice') },
    protocolId: { validate: typedId('protocolId', 0, 'lh-protocol.errors.id') },
  },
  typed: { protocolId: { type: 'num', types: ID_TYPES } },
  label: operationLabel(),
});
