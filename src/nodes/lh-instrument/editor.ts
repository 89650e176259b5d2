import { oneOf, showRowsFor, typedCount, typedText } from '../../editor/fields';
import { operationLabel, registerNode } from '../../editor/register';
import { INSTRUMENT_OPERATIONS } from './operation-names';

const OPERATIONS = ['msg', ...INSTRUMENT_OPERATIONS];

registerNode('lh-instrument', {
  icon: 'lh-instrument.svg',
  rules: {
    operation: { validate: oneOf(OPERATIONS, 'lh-instrument.errors.choice') },
    // the node's own bounds (src/client/deck.ts MAX_CELSIUS, MAX_DECK_POSITION, MAX_TRACE_LIMIT): a value the node
    // refuses gets the red triangle here, not a deploy whose every msg goes to Catch
    temperature: { validate: typedCount('temperature', 0, 'lh-instrument.errors.temperature', 105) },
    colour: { validate: typedText('colour', /^#?([0-9a-f]{6}|[0-9a-f]{8})$/i, 'lh-instrument.errors.colour') },
    position: { validate: typedCount('position', 1, 'lh-instrument.errors.position', 999) },
    limit: { validate: typedCount('limit', 1, 'lh-instrument.errors.limit', 1000) },
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
