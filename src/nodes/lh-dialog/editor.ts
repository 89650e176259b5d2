import { oneOf } from '../../editor/fields';
import { registerNode, text } from '../../editor/register';

registerNode('lh-dialog', {
  icon: 'lh-dialog.svg',
  rules: { viewResult: { validate: oneOf(['', 'msg', 'Ok', 'Yes', 'No', 'Cancel', 'Abort']) } },
  label() {
    const result = this.viewResult && this.viewResult !== 'msg' ? ': ' + String(this.viewResult) : '';
    return this.name || text(this, 'paletteLabel') + result;
  },
});
