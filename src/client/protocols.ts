/**
 * Which protocol a node means: by id, or by name through the instrument's list (lh-run, lh-protocol). Pure.
 */
import { LhError, validationError } from './errors';
import type { ProtocolName, RunsApi } from './runs';
import * as v from './validate';

/** The longest protocol name a msg or dialog may give (a longer one is refused before anything is sent). */
export const MAX_PROTOCOL_NAME_LENGTH = 1000;

/** Which protocol a msg or dialog names: by id, or by name (resolved through the instrument's list). */
export type ProtocolRef = { id: number } | { name: string };

export function protocolRef(id: unknown, name: unknown, operation: string): ProtocolRef {
  if (id !== undefined && id !== null && id !== '') return { id: v.databaseId(id, 'protocolId', operation) };
  if (typeof name === 'string' && name.trim() !== '') {
    // bounded before the instrument's list is read for it: no name is that long, and the refusal echoes it
    if (name.length > MAX_PROTOCOL_NAME_LENGTH) {
      throw validationError(operation, 'protocolName', `must be at most ${MAX_PROTOCOL_NAME_LENGTH} characters`, name);
    }
    return { name }; // as given: a protocol may be named "Mix " (see below)
  }
  if (name !== undefined && name !== null && name !== '') {
    throw new LhError('protocolName must be a text', { kind: 'validation', operation, field: 'protocolName' });
  }
  throw new LhError('a protocol is required: set protocolId or protocolName in the dialog or the msg', {
    kind: 'validation',
    operation,
    field: 'protocolId',
  });
}

/** A name as a person reads it: no leading or trailing whitespace, one Unicode form (NFC), any letter case. */
function looseName(name: string): string {
  return name.trim().normalize('NFC').toLowerCase();
}

/**
 * The id of the protocol named `name`: an exact match wins (the name as given: "Mix " is not "Mix"), then one without
 * the whitespace around the name, else a match as a person reads names (whitespace around them, Unicode form, letter
 * case ignored: "Café" typed is the "Café" the instrument may hold decomposed); none or several is an error that
 * lists what the instrument has.
 */
export function resolveProtocolName(name: string, names: ProtocolName[], operation: string): ProtocolName {
  const trimmed = name.trim();
  const exact = names.filter((p) => p.name === name);
  const close = exact.length > 0 ? exact : names.filter((p) => p.name === trimmed);
  const matches = close.length > 0 ? close : names.filter((p) => looseName(p.name) === looseName(name));
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) {
    throw new LhError(
      `protocolName "${name}" is ambiguous: protocols ${matches.map((p) => p.protocolId).join(', ')} have that name; give msg.protocolId instead`,
      { kind: 'validation', operation, field: 'protocolName' },
    );
  }
  const known = names
    .slice(0, 10)
    .map((p) => `"${p.name}" (${p.protocolId})`)
    .join(', ');
  throw new LhError(
    `protocolName "${name}" is not a protocol of the instrument${known ? `; it has ${known}${names.length > 10 ? ', …' : ''}` : ''}`,
    {
      kind: 'validation',
      operation,
      field: 'protocolName',
    },
  );
}

/** The protocol a ref names, as id and name (a name looked up in the instrument's list; an id taken as given). */
export async function resolveProtocol(
  runs: RunsApi,
  ref: ProtocolRef,
  operation: string,
): Promise<{ protocolId: number; name?: string }> {
  if ('id' in ref) return { protocolId: ref.id };
  const found = resolveProtocolName(ref.name, await runs.protocolNames(), operation);
  return { protocolId: found.protocolId, name: found.name };
}
