import { ID_TYPES, oneOf, picker, showRowsFor, typedId, wholeNumber } from '../../editor/fields';
import { operationLabel, registerNode } from '../../editor/register';

const OPERATIONS = ['msg', 'create', 'update', 'list', 'get', 'reorder', 'rename', 'enable', 'disable', 'delete'];
const STEP_ID_TYPES = ['str', ...ID_TYPES.filter((t) => t !== 'str')];

interface Step {
  id: number;
  stepOrder: number;
  name: string;
  stepType: string;
}

registerNode('lh-steps', {
  icon: 'lh-steps.svg',
  rules: {
    operation: { validate: oneOf(OPERATIONS, 'lh-steps.errors.operation') },
    protocolId: { validate: typedId('protocolId', 0, 'lh-steps.errors.id') },
    stepId: { validate: typedId('stepId', 0, 'lh-steps.errors.id') },
    offset: { validate: typedId('offset', 0, 'lh-steps.errors.count') },
    limit: { validate: typedId('limit', 1, 'lh-steps.errors.count') },
  },
  typed: {
    protocolId: { type: 'str', types: STEP_ID_TYPES },
    stepId: { type: 'str', types: STEP_ID_TYPES },
    offset: { type: 'num' },
    limit: { type: 'num' },
  },
  label: operationLabel(),
  prepare(config) {
    // Step types from the runtime; the saved value stays selectable when that request fails.
    const typeSelect = $('#node-input-stepType');
    const saved = typeof config.stepType === 'string' ? config.stepType : '';
    const keepSaved = (): void => {
      if (saved && typeSelect.find('option').filter((_i, o) => (o as HTMLOptionElement).value === saved).length === 0) {
        $('<option>').val(saved).text(saved).appendTo(typeSelect);
      }
      typeSelect.val(saved);
    };
    $.getJSON('lh-server/step-types')
      .done((types: string[] | null) => {
        for (const t of types ?? []) $('<option>').val(t).text(t).appendTo(typeSelect);
      })
      .always(keepSaved);

    showRowsFor('#node-input-operation', {
      '.lh-steps-row-stepId': ['update', 'get', 'rename', 'enable', 'disable', 'delete'],
      '.lh-steps-row-body': ['create', 'update'],
      '.lh-steps-row-list': ['list'],
      '.lh-steps-row-full': ['list', 'reorder'],
      '.lh-steps-row-custom': ['list', 'get', 'update', 'reorder', 'rename', 'enable', 'disable'],
    });

    // Optional help to fill the step id: lists the steps of the protocol through the deployed lh-server node.
    // The id field stays a plain typedInput, usable when the instrument or the config node is not there.
    const protocol = $('#node-input-protocolId');
    picker<Step>(this, 'lh-steps', {
      field: 'stepId',
      loading: true,
      check: () => {
        const type = protocol.typedInput('type');
        return (type !== 'num' && type !== 'str') || !wholeNumber(protocol.typedInput('value'), 0) ? 'noProtocol' : '';
      },
      path: () => 'protocols/' + encodeURIComponent(protocol.typedInput('value').trim()) + '/steps',
      label: (s) => s.stepOrder + '. ' + s.name + ' (' + s.stepType + ', id ' + s.id + ')',
    });
  },
});
