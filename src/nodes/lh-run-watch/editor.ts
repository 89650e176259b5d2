import { check, seconds } from '../../editor/fields';
import { registerNode } from '../../editor/register';

registerNode('lh-run-watch', {
  icon: 'lh-run-watch.svg',
  outputs: 4,
  outputLabels: ['state', 'finished', 'progress', 'connection'],
  rules: {
    // the node polls at least every 0.5 s and at most every 24 h (as lh-error-poll): beyond, it would silently clamp
    interval: { validate: seconds(0.5, 'lh-run-watch.errors.interval', false, 86400) },
    progressInterval: { validate: seconds(0, 'lh-run-watch.errors.seconds') },
    offlineAfter: {
      validate: check((v) => v === '' || (/^\d+$/.test(String(v)) && Number(v) >= 1), 'lh-run-watch.errors.offlineAfter'),
    },
  },
});
