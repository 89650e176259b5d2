import { oneOf, typedText } from '../../editor/fields';
import { registerNode, text } from '../../editor/register';

registerNode('lh-register-handler', {
  icon: 'lh-register-handler.svg',
  rules: {
    operation: { validate: oneOf(['register', 'unregister', 'check', 'msg']) },
    clientKey: { validate: typedText('clientKey', /^[A-Za-z0-9]{1,128}$/, 'lh-register-handler.errors.clientKey') },
  },
  typed: { clientKey: { type: 'str' } },
  label() {
    if (this.name) return this.name;
    const op = this.operation && this.operation !== 'msg' ? text(this, 'operation.' + String(this.operation)) : '';
    return op ? text(this, 'paletteLabel') + ': ' + op : text(this, 'paletteLabel');
  },
});
