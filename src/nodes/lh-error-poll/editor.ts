import { check, contextStoreSelect, numberIn, oneOf, showWhenChecked } from '../../editor/fields';
import { registerNode, text } from '../../editor/register';
import { rememberTurnedOn } from './remember-migrated';

registerNode('lh-error-poll', {
  icon: 'lh-error-poll.svg',
  outputs: 3,
  outputLabels: ['raised', 'resolved', 'connection'],
  rules: {
    source: { validate: oneOf(['A', 'B', 'both']) },
    interval: { required: true, validate: numberIn(0.5, 86400, 'lh-error-poll.errors.interval') },
    offlineAfter: {
      required: true,
      validate: check((v) => /^\d+$/.test(String(v)) && Number(v) >= 1 && Number(v) <= 100, 'lh-error-poll.errors.offlineAfter'),
    },
  },
  prepare(config) {
    contextStoreSelect('store', text(this, 'hint.store'), config.store);
    showWhenChecked('#node-input-persist', '.lh-error-poll-store-row');
    // saved by an older version with Remember off: it is on now, said beside the box (Done keeps it, or untick it)
    if (rememberTurnedOn(this))
      $('<div class="form-tips lh-error-poll-remember-migrated">')
        .text(text(this, 'migrated.persist'))
        .insertAfter($('#node-input-persist').closest('.form-row'));
  },
});
