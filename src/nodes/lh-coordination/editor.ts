import { databaseOfUrl } from '../../coordination/database';
import { check } from '../../editor/fields';
import { registerNode } from '../../editor/register';

/** One Redis URL, or several (sentinel, cluster) separated by commas or spaces. */
function redisUrls(v: unknown): boolean {
  const urls = String(v ?? '')
    .split(/[\s,]+/)
    .filter((s) => s);
  return (
    urls.length > 0 && urls.every((u) => /^rediss?:\/\/[^\s/@]+/i.test(u) && !/[?#@]/.test(u) && databaseOfUrl(u) !== undefined)
  );
}

registerNode('lh-coordination', {
  category: 'config',
  server: false,
  rules: {
    url: { required: true, validate: check(redisUrls, 'lh-coordination.errors.url') },
    prefix: { validate: RED.validators.regex(/^[A-Za-z0-9_.:-]{1,64}$/) },
    leaseSeconds: { validate: RED.validators.number() },
    tls: { type: 'tls-config', required: false },
  },
  credentials: { username: { type: 'text' }, password: { type: 'password' } },
  label() {
    return this.name || (typeof this.url === 'string' && this.url) || 'lh-coordination';
  },
});
