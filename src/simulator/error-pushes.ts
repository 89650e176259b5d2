/**
 * What the simulator pushes on `instincterrors`: every A runtime error when it appears and when it is resolved
 * (answered, cleared, resolved through /sim), and firmware errors that exist only on the socket (raised and
 * resolved through /sim, never in the error list).
 *
 * Frame codes (the real frame shape is not documented): `RuntimeError` with the error as Data (`Source`
 * 'Service' or 'Firmware'), `RuntimeErrorResolved` with `{Id}` as Data.
 */
import { randomUUID } from 'crypto';
import { badRequest, notFound } from './problem';
import { field, isObject } from './json-fields';
import { nestedFrame } from './event-sockets';
import type { PendingError, Severity } from './types';

export interface FirmwareError {
  id: string;
  title: string;
  message: string;
  severity: Severity;
  errorResponses: { response: string }[];
  groupId: string;
  timeStamp: string;
  source: 'Firmware';
}

const SEVERITIES: Severity[] = ['Warning', 'Error', 'Fatal'];

export type FramePublisher = (frame: string) => void;

export function raisedFrame(error: PendingError | FirmwareError, source: 'Service' | 'Firmware'): string {
  const { handled: _handled, selectedResponse: _selected, ...shown } = error as PendingError;
  return nestedFrame('RuntimeError', error.title, { ...shown, source });
}

export function resolvedFrame(id: string): string {
  return nestedFrame('RuntimeErrorResolved', `Error ${id} resolved`, { id });
}

export class ErrorPushes {
  private known = new Set<string>();
  readonly firmware = new Map<string, FirmwareError>();

  constructor(private readonly publish: FramePublisher) {}

  /** Pushes the A errors that appeared or went since the last call. */
  sync(pending: PendingError[]): void {
    const now = new Set(pending.map((e) => e.id));
    for (const e of pending) if (!this.known.has(e.id)) this.publish(raisedFrame(e, 'Service'));
    for (const id of this.known) if (!now.has(id)) this.publish(resolvedFrame(id));
    this.known = now;
  }

  /** Forgets everything without pushing (simulator reset). */
  clear(pending: PendingError[] = []): void {
    this.known = new Set(pending.map((e) => e.id));
    this.firmware.clear();
  }

  /** Body of POST /sim/firmware-error: {id?, title?, message?, severity?, responses?, groupId?}. */
  raiseFirmware(body: unknown): FirmwareError {
    const obj = isObject(body) ? body : {};
    const str = (name: string): string | undefined => {
      const v = field(obj, name);
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'string' || v.trim() === '') throw badRequest(name, `${name} must be a non-empty string.`);
      return v;
    };
    const id = str('id') ?? randomUUID();
    if (this.firmware.has(id)) throw badRequest('id', `A firmware error with id '${id}' is already active.`);
    const severity = str('severity') ?? 'Error';
    if (!SEVERITIES.includes(severity as Severity))
      throw badRequest('severity', `severity must be one of ${SEVERITIES.join(', ')}.`);
    const responses = field(obj, 'responses') ?? ['Retry', 'Abort'];
    if (!Array.isArray(responses) || responses.length === 0 || responses.some((r) => typeof r !== 'string' || r === ''))
      throw badRequest('responses', 'responses must be a non-empty array of strings.');
    const error: FirmwareError = {
      id,
      title: str('title') ?? 'Pipetting channel pressure fault',
      message: str('message') ?? 'The pressure sensor of channel 1 reported a fault during aspiration.',
      severity: severity as Severity,
      errorResponses: (responses as string[]).map((response) => ({ response })),
      groupId: str('groupId') ?? randomUUID(),
      timeStamp: new Date().toISOString(),
      source: 'Firmware',
    };
    this.firmware.set(id, error);
    this.publish(raisedFrame(error, 'Firmware'));
    return { ...error };
  }

  resolveFirmware(id: string): void {
    if (!this.firmware.delete(id)) throw notFound(`No active firmware error with id '${id}'.`);
    this.publish(resolvedFrame(id));
  }
}
