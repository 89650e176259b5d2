import { oneOf, showRowsFor, typedCount, typedText } from '../../editor/fields';
import { operationLabel, registerNode } from '../../editor/register';
import { INSTRUMENT_OPERATIONS } from './operation-names';

const OPERATIONS = ['msg', ...INSTRUMENT_OPERATIONS];

registerNode('lh-instrument', {
  icon: 'lh-instrument.svg',
  rules: {
    operation: { validate: oneOf(OPERATIONS, 'lh-instrument.errors.choice') },
    temperature: { validate: typedCount('temperature', 0, 'lh-instrument.errors.temperature') },
    colour: { validate: typedText('colour', /^#?([0-9a-f]{6}|[0-9a-f]{8})$/i, 'lh-instrument.errors.colour') },
    position: { validate: typedCount('position', 1, 'lh-instrument.errors.position') },
    limit: { validate: typedCount('limit', 1, 'lh-instrument.errors.limit') },
  },
  typed: {
    temperature: { type: 'num' },
    colour: { type: 'str' },
    position: { type: 'num' },
    offset: { type: 'num' },
    limit: { type: 'num' },
  },
  label: operationLabel(),
  prepare() {
    showRowsFor('#node-input-operation', {
      '.lh-instrument-row-temperature': ['heater-start'],
      '.lh-instrument-row-colour': ['lights-custom'],
      '.lh-instrument-row-position': ['deck-scan'],
      '.lh-instrument-row-rectified': ['snapshot'],
      '.lh-instrument-row-traces': ['traces'],
    });
  },
});
