import { oneOf, typedInteger, typedText } from '../../editor/fields';
import { registerNode } from '../../editor/register';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

registerNode('lh-submit-recovery', {
  icon: 'lh-submit-recovery.svg',
  rules: {
    kind: { validate: oneOf(['recovery', 'action', 'msg']) },
    selectedActionId: { validate: typedInteger('selectedActionId', 'lh-submit-recovery.errors.selectedActionId') },
    uuid: { validate: typedText('uuid', UUID, 'lh-submit-recovery.errors.uuid') },
  },
  typed: { selectedActionId: { type: 'num' }, uuid: { type: 'str' } },
  label() {
    return this.name || this._('lh-submit-recovery.nodeLabel');
  },
});
