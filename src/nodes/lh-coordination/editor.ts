import { CoordinationConfigError, coordinationSettings } from '../../coordination/config';
import type { EditorNode, Validator } from '../../editor/red';
import { registerNode, text } from '../../editor/register';

/** A field's value: the open dialog's input, else the saved node's property. */
function dialogValue(node: EditorNode, key: string): unknown {
  const input = $('#node-config-input-' + key);
  return input.length > 0 ? input.val() : node[key];
}

const PROBE_URL = 'redis://127.0.0.1:6379';

/**
 * A field's check is the runtime's own (coordinationSettings, which the node runs when it starts), over this field's
 * value and only the fields its rule depends on (the URL and the Sentinel group on the mode): a dialog saves what
 * the node accepts, and each field names its own rule, whatever another field holds.
 */
function settingsCheck(field: 'url' | 'sentinelName' | 'prefix' | 'leaseSeconds'): Validator {
  return function (v, opt) {
    const config: Record<string, unknown> =
      field === 'url'
        ? { url: v, mode: dialogValue(this, 'mode'), sentinelName: 'group' }
        : field === 'sentinelName'
          ? { url: PROBE_URL, mode: dialogValue(this, 'mode'), sentinelName: v }
          : { url: PROBE_URL, [field]: v };
    try {
      coordinationSettings(config);
      return true;
    } catch (err) {
      if (!(err instanceof CoordinationConfigError) || err.field !== field) return true;
      return opt ? text(this, 'label.' + field) + ': ' + err.rule : false;
    }
  };
}

registerNode('lh-coordination', {
  category: 'config',
  server: false,
  rules: {
    url: { required: true, validate: settingsCheck('url') },
    sentinelName: { validate: settingsCheck('sentinelName') },
    prefix: { validate: settingsCheck('prefix') },
    leaseSeconds: { validate: settingsCheck('leaseSeconds') },
    tls: { type: 'tls-config', required: false },
  },
  credentials: { username: { type: 'text' }, password: { type: 'password' } },
  label() {
    return this.name || (typeof this.url === 'string' && this.url) || 'lh-coordination';
  },
});
