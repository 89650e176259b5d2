import { oneOf, showRowsFor } from '../../editor/fields';
import { operationLabel, registerNode } from '../../editor/register';

registerNode('lh-settings', {
  icon: 'lh-settings.svg',
  rules: {
    operation: {
      validate: oneOf(
        ['msg', 'get-software-settings', 'set-software-settings', 'get-policy-settings'],
        'lh-settings.errors.choice',
      ),
    },
    mode: { validate: oneOf(['merge', 'replace', 'msg'], 'lh-settings.errors.choice') },
  },
  label: operationLabel(),
  prepare() {
    showRowsFor('#node-input-operation', { '.lh-settings-row-mode': ['set-software-settings'] });
  },
});
