import { check } from '../../editor/fields';
import { registerNode, text } from '../../editor/register';

/** A new link-signing secret: 32 random bytes as hex. */
function randomSecret(): string {
  const bytes = new Uint8Array(32);
  window.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

registerNode('lh-answer-page', {
  icon: 'lh-answer-page.svg',
  outputs: 2,
  outputLabels: ['out', 'audit'],
  credentials: { secret: { type: 'password' } },
  rules: {
    path: { required: true, validate: check((v) => /^\/?[A-Za-z0-9_\-/]{1,100}$/.test(String(v)), 'lh-answer-page.errors.path') },
    expiryHours: {
      required: true,
      validate: check((v) => v !== '' && Number(v) > 0 && Number(v) <= 2160, 'lh-answer-page.errors.expiryHours'),
    },
  },
  typed: { publicUrl: { type: 'env', types: ['env', 'str', 'global', 'flow'] } },
  label() {
    return this.name || text(this, 'paletteLabel') + ' ' + String(this.path ?? '');
  },
  prepare() {
    // The link secret is generated here when the node has none; it is never shown.
    if (!this.credentials?.has_secret) $('#node-input-secret').val(randomSecret());
  },
});
