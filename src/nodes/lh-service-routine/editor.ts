import { ID_TYPES, oneOf, picker, showRowsFor, typedId } from '../../editor/fields';
import { operationLabel, registerNode } from '../../editor/register';

interface Routine {
  id: number;
  name?: string;
  isRecommended?: boolean;
}

registerNode('lh-service-routine', {
  icon: 'lh-service-routine.svg',
  rules: {
    operation: { validate: oneOf(['msg', 'list', 'get', 'update'], 'lh-service-routine.errors.choice') },
    routineId: { validate: typedId('routineId', 0, 'lh-service-routine.errors.id') },
  },
  typed: { routineId: { type: 'num', types: ID_TYPES } },
  label: operationLabel('nodeLabel'),
  prepare() {
    showRowsFor('#node-input-operation', {
      '.lh-service-routine-row-id': ['get', 'update'],
      '.lh-service-routine-row-list': ['list'],
      '.lh-service-routine-row-update': ['update'],
    });
    // Optional: fill the id from the deployed instrument's routines; the typed input always works on its own.
    picker<Routine>(this, 'lh-service-routine', {
      field: 'routineId',
      path: () => 'service-routines',
      label: (r) => r.id + ': ' + (r.name ?? '') + (r.isRecommended ? ' \u2605' : ''),
    });
  },
});
