import { check, oneOf, showRowsFor, showWhenChecked, typedCount, typedText } from '../../editor/fields';
import { registerNode } from '../../editor/register';

registerNode('lh-error-log', {
  icon: 'lh-error-log.svg',
  rules: {
    operation: { validate: oneOf(['list', 'get', 'msg']) },
    offset: { validate: typedCount('offset', 0, 'lh-error-log.errors.offset') },
    limit: { validate: typedCount('limit', 1, 'lh-error-log.errors.limit') },
    maxItems: {
      validate: check(
        (v) => v === '' || (/^\d+$/.test(String(v)) && Number(v) >= 1 && Number(v) <= 100000),
        'lh-error-log.errors.maxItems',
      ),
    },
    errorId: { validate: typedText('errorId', /^[A-Za-z0-9._~:-]{1,200}$/, 'lh-error-log.errors.errorId') },
  },
  typed: { offset: { type: 'num' }, limit: { type: 'num' }, errorId: { type: 'str' } },
  prepare() {
    showRowsFor('#node-input-operation', { '.lh-error-log-list': ['list'], '.lh-error-log-get': ['get'] });
    showWhenChecked('#node-input-allPages', '.lh-error-log-max');
  },
});
