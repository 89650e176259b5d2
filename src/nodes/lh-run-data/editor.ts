import { oneOf, showRowsFor, typedText } from '../../editor/fields';
import { operationLabel, registerNode } from '../../editor/register';

registerNode('lh-run-data', {
  icon: 'lh-run-data.svg',
  rules: {
    operation: { validate: oneOf(['msg', 'list', 'get', 'report', 'pipetting-csv'], 'lh-run-data.errors.choice') },
    runId: { validate: typedText('runId', /^[A-Za-z0-9._~:-]{1,200}$/, 'lh-run-data.errors.runId') },
  },
  typed: { runId: { type: 'str' } },
  label: operationLabel(),
  prepare() {
    showRowsFor('#node-input-operation', { '.lh-run-data-row-id': ['get', 'report', 'pipetting-csv'] });
  },
});
