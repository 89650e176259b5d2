import { typedText } from '../../editor/fields';
import { registerNode, text } from '../../editor/register';

registerNode('lh-answer-error', {
  icon: 'lh-answer-error.svg',
  rules: {
    selectedResponse: { validate: typedText('selectedResponse', /^\S(.{0,198}\S)?$/, 'lh-answer-error.errors.selectedResponse') },
    errorId: { validate: typedText('errorId', /^[A-Za-z0-9._~:-]{1,200}$/, 'lh-answer-error.errors.errorId') },
  },
  typed: { selectedResponse: { type: 'str' }, errorId: { type: 'str' } },
  label() {
    const response = this.selectedResponse && this.selectedResponseType === 'str' ? ': ' + String(this.selectedResponse) : '';
    return this.name || text(this, 'paletteLabel') + response;
  },
});
