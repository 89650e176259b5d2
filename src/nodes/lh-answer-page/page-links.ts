/** Where the page lives and what a link carries: settings and msgs to values, without Node-RED. */
import { LhError } from '../../client';
import { publicUrl } from '../shared/error-records';

const OP = 'answer-page';
const DEFAULT_PATH = '/lh-answer';
const DEFAULT_EXPIRY_HOURS = 24;

export function routePath(value: unknown): string {
  const p = typeof value === 'string' && value.trim() !== '' ? value.trim() : DEFAULT_PATH;
  return `/${p.replace(/^\/+/, '').replace(/\/+$/, '')}`;
}

/**
 * Why the page's path cannot be served, or undefined: the edit dialog's rule (letters, digits, - _ /, at most 100),
 * checked at run time too, since a flow imported or written without the dialog could give Express's route syntax
 * (`/:page`, `/*`, `(.*)`), which would take the GET and POST of other routes (a flow's own http in endpoints).
 */
export function pathProblem(value: unknown): string | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return undefined;
  if (typeof value === 'string' && /^\/?[A-Za-z0-9_\-/]{1,100}$/.test(value.trim())) return undefined;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 120)) : typeof value;
  return `path ${shown} is not a page path: it must be like /lh-answer (letters, digits, - _ /, at most 100), so the page never takes other routes`;
}

export function expiryMs(hours: unknown): number {
  const h = Number(hours);
  return (
    (hours === '' || hours === undefined || !Number.isFinite(h) || h <= 0 ? DEFAULT_EXPIRY_HOURS : Math.min(h, 24 * 90)) *
    3_600_000
  );
}

/** The link base: public URL of this Node-RED + httpNodeRoot + the page's path. */
export function pageUrl(base: unknown, httpNodeRoot: unknown, path: string): string {
  const given = typeof base === 'string' ? base.trim() : '';
  if (!/^https?:\/\/[^/\s?#]+/i.test(given)) {
    throw new LhError(
      `publicUrl must be the http:// or https:// address people reach this Node-RED at (set LH_PUBLIC_URL or the Public URL setting; got ${JSON.stringify(given)})`,
      { kind: 'validation', operation: OP, field: 'publicUrl' },
    );
  }
  const cleaned = publicUrl(given);
  if (!cleaned) throw new LhError('publicUrl is not a valid URL', { kind: 'validation', operation: OP, field: 'publicUrl' });
  const root = typeof httpNodeRoot === 'string' ? httpNodeRoot.replace(/^\/+|\/+$/g, '') : '';
  return `${cleaned}${root ? `/${root}` : ''}${path}`;
}

/**
 * Why there is no public address to build links with, when there is none: the environment variable the node reads
 * is unset (or empty) and no Public URL is set. Undefined when an address is given (pageUrl checks it).
 */
export function missingPublicUrl(given: unknown, type: unknown, configured: unknown): string | undefined {
  if (typeof given === 'string' && given.trim() !== '') return undefined;
  const name = typeof configured === 'string' && configured !== '' ? configured : 'LH_PUBLIC_URL';
  if (type === undefined || type === '' || type === 'env') {
    return `the environment variable ${name} is not set: set it to the address people reach this Node-RED at (e.g. https://lab.example.org:1880), or set the Public URL of the answer page`;
  }
  return 'the Public URL of the answer page is empty: set the address people reach this Node-RED at (e.g. https://lab.example.org:1880)';
}

/** The line a notification gets instead of the link. */
export function noLinkLine(reason: string): string {
  return `(No answer link: ${reason}. Answer in the Node-RED editor or on the instrument.)`;
}

/**
 * An error's key as the node's status shows it: up to 12 characters as it is, a longer one (a B uuid, 36) as its first 8
 * and an ellipsis, so the status does not run over the neighbouring nodes of the canvas. The full key is in the msgs.
 */
export function statusKey(key: string): string {
  return key.length <= 12 ? key : `${key.slice(0, 8)}…`;
}
