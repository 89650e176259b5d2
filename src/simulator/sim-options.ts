/** Reading SimulatorOptions: strictness, the A prefix, hosts in URLs. */
import type { SimulatorOptions } from './types';

/** `strict` wins; otherwise the older `lenientMediaTypes` (false = strict); the default is the real instrument's leniency. */
export function isStrict(options: Pick<SimulatorOptions, 'strict' | 'lenientMediaTypes'>): boolean {
  if (options.strict !== undefined) return options.strict;
  return options.lenientMediaTypes === false;
}

/** '' or '/Name' (leading slash added, trailing slashes dropped). */
export function normalisePrefix(prefix: string): string {
  const trimmed = prefix.trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/** A host as it stands in a URL (IPv6 in brackets). */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
