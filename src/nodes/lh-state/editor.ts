import { check } from '../../editor/fields';
import { registerNode, text } from '../../editor/register';
import { topicTemplateOk } from '../../observe/state-document';

/**
 * A topic template: no MQTT wildcards, no character a broker refuses (the name is put in as one level, its own + # /
 * replaced); the runtime's rule, so what the dialog takes the node starts with.
 */
function topicOk(v: unknown): boolean {
  const s = String(v ?? '');
  return s === '' || topicTemplateOk(s);
}

function numberIn(min: number, max: number): (v: unknown) => boolean {
  return (v) => {
    const s = String(v ?? '').trim();
    if (s === '') return true;
    const n = Number(s);
    return Number.isFinite(n) && n >= min && n <= max;
  };
}

registerNode('lh-state', {
  icon: 'lh-state.svg',
  inputs: 1,
  outputs: 2,
  outputLabels: ['state (retained)', 'error and run events'],
  rules: {
    topic: { validate: check(topicOk, 'lh-state.errors.topic') },
    eventTopic: { validate: check(topicOk, 'lh-state.errors.topic') },
    rate: { validate: check(numberIn(0.1, 50), 'lh-state.errors.rate') },
    machineInterval: {
      validate: check((v) => String(v ?? '').trim() === '0' || numberIn(5, 3600)(v), 'lh-state.errors.machineInterval'),
    },
    repeat: {
      validate: check((v) => String(v ?? '').trim() === '0' || numberIn(1, 86400)(v), 'lh-state.errors.repeat'),
    },
  },
  label() {
    return this.name || text(this, 'paletteLabel');
  },
});
