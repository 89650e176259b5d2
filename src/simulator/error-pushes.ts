/**
 * What the simulator pushes on `instincterrors`: every A runtime error when it appears and when it is resolved
 * (answered, cleared, resolved through /sim), and firmware errors that exist only on the socket (raised and
 * resolved through /sim, never in the error list).
 *
 * Frame codes (the real frame shape is not documented): `RuntimeError` with the error as data (`source`
 * 'Service' or 'Firmware'), `RuntimeErrorResolved` with `{id}` as data (PascalCase names when strict).
 */
import { randomUUID } from 'crypto';

import { type FrameCasing, nestedFrame } from './event-sockets';
import { field, isObject, requireObject, requireString } from './json-fields';
import { badRequest, HttpProblem, notFound } from './problem';
import type { Reply, RequestContext } from './router';
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

export function raisedFrame(error: PendingError | FirmwareError, source: 'Service' | 'Firmware', casing?: FrameCasing): string {
  const { handled: _handled, selectedResponse: _selected, ...shown } = error as PendingError;
  return nestedFrame('RuntimeError', error.title, { ...shown, source }, casing);
}

export function resolvedFrame(id: string, casing?: FrameCasing): string {
  return nestedFrame('RuntimeErrorResolved', `Error ${id} resolved`, { id }, casing);
}

const MAX_ANSWERED = 1000;

export class ErrorPushes {
  private known = new Set<string>();
  readonly firmware = new Map<string, FirmwareError>();
  /** firmware errors answered with PUT errors/runtime: id → the response chosen (a second answer is 409) */
  readonly answeredFirmware = new Map<string, string>();
  /**
   * Whether an answer to a firmware error is followed by its resolution on the socket (default). Off: the answer is
   * taken silently, as an instrument whose socket does not say it (what the tested clients show is silent on this).
   */
  pushOnAnswer = true;

  constructor(
    private readonly publish: FramePublisher,
    private readonly casing: FrameCasing = 'observed',
  ) {}

  /** Pushes the A errors that appeared or went since the last call. */
  sync(pending: PendingError[]): void {
    const now = new Set(pending.map((e) => e.id));
    for (const e of pending) if (!this.known.has(e.id)) this.publish(raisedFrame(e, 'Service', this.casing));
    for (const id of this.known) if (!now.has(id)) this.publish(resolvedFrame(id, this.casing));
    this.known = now;
  }

  /** Forgets everything without pushing (simulator reset). */
  clear(pending: PendingError[] = []): void {
    this.known = new Set(pending.map((e) => e.id));
    this.firmware.clear();
    this.answeredFirmware.clear();
  }

  /**
   * PUT errors/runtime for a firmware error (the same answer as for an A error: {id, selectedResponse}); undefined
   * when the request is about anything else, which the A routes then handle.
   */
  answerFirmware(ctx: RequestContext): Reply | undefined {
    if (ctx.method !== 'PUT' || ctx.path.toLowerCase() !== '/api/v1/errors/runtime' || !isObject(ctx.body)) return undefined;
    const id = field(ctx.body, 'id');
    if (typeof id !== 'string' || (!this.firmware.has(id) && !this.answeredFirmware.has(id))) return undefined;
    const previous = this.answeredFirmware.get(id);
    if (previous !== undefined)
      throw new HttpProblem(409, `Runtime error '${id}' has already been handled (response '${previous}').`);
    const selected = requireString(requireObject(ctx.body), 'selectedResponse', { nonEmpty: true });
    const error = this.firmware.get(id) as FirmwareError;
    const offered = error.errorResponses.map((r) => r.response);
    if (!offered.includes(selected)) {
      throw badRequest('selectedResponse', `'${selected}' is not a response of this error; offered: ${offered.join(', ')}.`);
    }
    this.firmware.delete(id);
    this.answeredFirmware.set(id, selected);
    if (this.answeredFirmware.size > MAX_ANSWERED)
      this.answeredFirmware.delete(this.answeredFirmware.keys().next().value as string);
    if (this.pushOnAnswer) this.publish(resolvedFrame(id, this.casing));
    return { status: 204 };
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
    this.publish(raisedFrame(error, 'Firmware', this.casing));
    return { ...error };
  }

  resolveFirmware(id: string): void {
    if (!this.firmware.delete(id)) throw notFound(`No active firmware error with id '${id}'.`);
    this.publish(resolvedFrame(id, this.casing));
  }
}
