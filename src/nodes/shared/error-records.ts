import { type LiquidHandlerClient } from '../../client';
import { type LhServerNode } from './server-node';

/** What a msg may say about the instrument: its name and URLs, never credentials. */
export interface InstrumentInfo {
  name: string;
  baseUrl: string;
  instrumentUrl: string;
}

/** A URL without user info, query or fragment, so nothing secret ends up in a msg. */
export function publicUrl(url: string | undefined): string {
  if (!url) return '';
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`.replace(/\/+$/, '');
  } catch {
    return '';
  }
}

export function instrumentInfo(server: LhServerNode, client: LiquidHandlerClient): InstrumentInfo {
  return {
    name: server.displayName || publicUrl(client.baseUrl),
    baseUrl: publicUrl(client.baseUrl),
    instrumentUrl: publicUrl(client.instrumentUrl),
  };
}

/**
 * The response names of a pending error's `errorResponses` (or an errorData item's): elements may be strings
 * or `{response}` objects (any letter case of the property, as the instrument is an ASP.NET service).
 */
export function responseNames(options: unknown): string[] {
  if (!Array.isArray(options)) return [];
  const names: string[] = [];
  for (const option of options) {
    if (typeof option === 'string') names.push(option);
    else if (option && typeof option === 'object') {
      const o = option as Record<string, unknown>;
      const name = o.response ?? o.Response ?? o.name;
      if (typeof name === 'string') names.push(name);
    }
  }
  return names;
}

/** An action a B error offers, as far as the record says. */
export interface OfferedAction {
  id: number;
  description?: string;
  isRecovery?: boolean;
  isDefault?: boolean;
}

export function offeredActions(record: unknown): OfferedAction[] | undefined {
  if (!record || typeof record !== 'object') return undefined;
  const actions = (record as Record<string, unknown>).actions;
  if (!Array.isArray(actions)) return undefined;
  const out: OfferedAction[] = [];
  for (const a of actions) {
    if (!a || typeof a !== 'object') continue;
    const o = a as Record<string, unknown>;
    if (typeof o.id !== 'number') continue;
    out.push({
      id: o.id,
      description: typeof o.description === 'string' ? o.description : undefined,
      isRecovery: typeof o.isRecovery === 'boolean' ? o.isRecovery : undefined,
      isDefault: typeof o.isDefault === 'boolean' ? o.isDefault : undefined,
    });
  }
  return out;
}

/** "1 Retry (default), 2 Skip" */
export function describeActions(actions: OfferedAction[]): string {
  return actions.map((a) => `${a.id}${a.description ? ` ${a.description}` : ''}${a.isDefault ? ' (default)' : ''}`).join(', ');
}
