/**
 * What the instrument's `instincterrors` socket means for lh-error-poll, decided without sockets, timers or
 * Node-RED. A frame makes the node poll at once (so raising, resolving and exactly-once of listed errors stay in
 * applyPoll); only errors that exist on the socket alone (firmware errors, never in the error list) are raised and
 * resolved from the frame, through applyPush, in a memory of their own that polls never resolve, and a frame that
 * settles nothing but such errors asks for no poll (settledByFrame).
 *
 * A firmware error is resolved when the instrument pushes its resolution, or when this Node-RED answered it (the
 * client's answer ledger, any node, any lh-server of the instrument). Nothing else resolves it: not its absence from
 * a poll (it is never listed), not a reconnect after which the instrument does not push it again. A resolution
 * pushed while the socket was down is therefore not guessed: the error stays pending (and is logged once at the
 * reconnect) until the instrument says so or it is answered, because reporting an error resolved while the
 * instrument still waits for an answer is the unsafe mistake; a stale pending one is refused as already answered.
 */
import type { ErrorFrame } from '../../client';
import { identityOf, sameError, validate as v } from '../../client';
import type { PolledError } from '../shared/poll-messages';
import { applyPush, type PollRules, type Sourced, type SourceResult, type StatusDecision } from './poll-decisions';
import { type SeenErrors, type WatchState } from './seen-errors';

/** The memory of firmware errors in WatchState.channels. */
export const FIRMWARE_CHANNEL = 'firmware';

export interface PushOutcome {
  raised: Sourced<PolledError>[];
  resolved: Sourced<PolledError>[];
  changed: boolean;
  /** open firmware errors forgotten, oldest first, to keep at most MAX_OPEN_FIRMWARE (say so once) */
  dropped?: number;
}

/**
 * Firmware errors held open at most: they exist on the socket alone and only a pushed resolution or an answer ends
 * them, so an instrument that pushes errors without end (or never pushes resolutions) could grow the memory (and
 * every save of it) without bound. Beyond this, the oldest are forgotten unreported.
 */
export const MAX_OPEN_FIRMWARE = 500;

const NOTHING: PushOutcome = { raised: [], resolved: [], changed: false };

type Rules = Pick<PollRules<PolledError>, 'keyOf' | 'wanted'>;

function firmwareMemory(watch: WatchState): SeenErrors | undefined {
  return watch.channels.get(FIRMWARE_CHANNEL);
}

/** The open firmware error under this id, as it was raised, if the watch holds one. */
export function openFirmwareRecord(watch: WatchState, id: string): Record<string, unknown> | undefined {
  const record = firmwareMemory(watch)?.activeRecord(id);
  return record && typeof record === 'object' ? (record as Record<string, unknown>) : undefined;
}

/**
 * One frame read by firmwareErrorFromFrame: a firmware error raised (unless the error list already knows its id:
 * then it is a listed error and the poll owns it), or a firmware error resolved. Service errors and anything
 * unrecognised change nothing here (the poll the frame triggers does the work).
 */
export function applyErrorFrame(watch: WatchState, frame: ErrorFrame, rules: Rules, maxOpen = MAX_OPEN_FIRMWARE): PushOutcome {
  if (frame.kind === 'raised') {
    if (frame.error.source !== 'firmware') return NOTHING;
    // the list's error under this id (active or resolved) is this one: the poll owns it. Another error under an id
    // a listed error had before (an id the instrument reused) is new: raised here.
    if (!unknownToList(watch, frame.error, rules)) return NOTHING;
    const outcome = applyPush<PolledError>(watch, { source: 'A', channel: FIRMWARE_CHANNEL, raised: [frame.error] }, rules);
    const dropped = firmwareMemory(watch)?.dropOldest(maxOpen) ?? 0;
    return dropped > 0 ? { ...outcome, changed: true, dropped } : outcome;
  }
  if (frame.kind === 'resolved') {
    if (!firmwareMemory(watch)) return NOTHING;
    return applyPush<PolledError>(watch, { source: 'A', channel: FIRMWARE_CHANNEL, resolved: [frame.resolvedId] }, rules);
  }
  return NOTHING;
}

/**
 * Whether a frame settles its error by itself, so that it asks for no poll (issue 31), decided before it is applied:
 * a firmware error raised by a frame that names its source "Firmware" (never listed: a poll could find nothing of it)
 * and that the error list does not know, or the resolution of an open firmware error under an id no listed error holds.
 * Anything else polls at once: a frame without a source (it reads as a firmware error, and may be a listed one after
 * all, which its poll adopts), a listed error, the resolution of any other id, a frame not understood. The safety-net
 * poll goes on at the interval whatever the frames.
 */
export function settledByFrame(
  watch: WatchState,
  frame: ErrorFrame,
  rules: Rules,
  unpolled?: Pick<UnpolledFrames, 'mayList'>,
): boolean {
  if (frame.kind === 'raised') {
    return frame.error.source === 'firmware' && frame.sourceNamed === true && unknownToList(watch, frame.error, rules);
  }
  if (frame.kind === 'resolved')
    return (
      firmwareMemory(watch)?.activeRecord(frame.resolvedId) !== undefined &&
      watch.sources.A.activeRecord(frame.resolvedId) === undefined &&
      // a listed error pushed under the id whose poll has not been applied yet: A's memory does not hold it yet, and
      // that poll's answer may have been read before this resolution (then only a follow-up finds it gone)
      !(unpolled?.mayList(frame.resolvedId) ?? false)
    );
  return false;
}

/**
 * A poll's list less the errors it may show from before their resolution was pushed (a listed error pushed without a
 * source is raised from its frame as a firmware error, and its resolution frame resolves it there): an A record under
 * an id whose resolution was heard while this poll's request was under way, the same error as a firmware error under
 * that id resolved before (and not open again), and no error of A's memory under the id. The poll would raise it a second
 * time; the follow-up that resolution asked for (followUpNeeded: its id is listed) tells whether it is still listed,
 * and raises it then. Pure: the results are not changed.
 */
export function withoutResolvedMeanwhile(
  results: SourceResult<PolledError>[],
  heard: readonly ErrorFrame[],
  watch: WatchState,
  rules: Rules,
): SourceResult<PolledError>[] {
  const firmware = firmwareMemory(watch);
  const ids = new Set(heard.flatMap((frame) => (frame.kind === 'resolved' ? [frame.resolvedId] : [])));
  if (!firmware || ids.size === 0) return results;
  const stale = (record: PolledError): boolean => {
    const key = rules.keyOf('A', record);
    if (key === undefined || !ids.has(key) || watch.sources.A.activeRecord(key) !== undefined) return false;
    const open = firmware.activeRecord(key);
    return (
      firmware.resolvedBefore(key, asCompared(record)) && (open === undefined || !sameErrorRecords(asCompared(open), record))
    );
  };
  return results.map((r) => (r.source === 'A' && 'records' in r ? { ...r, records: r.records.filter((x) => !stale(x)) } : r));
}

/** Keys noted at most by UnpolledFrames; beyond, any id may be listed unseen (every such resolution polls). */
export const MAX_UNPOLLED_KEYS = 512;

/**
 * The ids under which a frame that asked for a poll may have announced a listed error that A's memory does not hold
 * yet, because no poll whose request started after that frame has been applied (issue 31). settledByFrame asks it: the
 * resolution of an open firmware error under such an id may be the listed error's, and the poll under way may have
 * read the list before it, so that resolution still polls (it then counts among the frames heard, and its follow-up
 * finds the error gone). A frame not understood may have announced any id. A poll whose A list failed covers nothing.
 */
export class UnpolledFrames {
  /** id → the number of the last frame that asked under it */
  private readonly keys = new Map<string, number>();
  /** the number of the last frame not understood (or beyond the cap) that asked: any id, up to it */
  private any = 0;
  private frames = 0;

  /** A frame that asked for a poll (settledByFrame false). */
  asked(frame: ErrorFrame, rules: Rules): void {
    const at = ++this.frames;
    if (frame.kind === 'unrecognised') this.any = at;
    if (frame.kind !== 'raised') return;
    const key = rules.keyOf('A', frame.error);
    if (key === undefined || (this.keys.size >= MAX_UNPOLLED_KEYS && !this.keys.has(key))) this.any = at;
    else this.keys.set(key, at);
  }

  mayList(key: string): boolean {
    return this.any > 0 || this.keys.has(key);
  }

  /** A poll's request starts: the frames that asked so far are those it may cover (see `applied`). */
  requested(): number {
    return this.frames;
  }

  /**
   * The poll whose request started at `requested` was applied: when A listed, A's memory holds what those frames
   * announced; the frames after may not be in the list it read. A poll whose A list failed covers nothing.
   */
  applied(requested: number, results: SourceResult<PolledError>[]): void {
    if (!results.some((r) => r.source === 'A' && 'records' in r)) return;
    if (this.any <= requested) this.any = 0;
    for (const [key, at] of this.keys) if (at <= requested) this.keys.delete(key);
  }
}

/**
 * Whether a frame asks for the deck photo ahead of its poll (issue 31): a listed error pushed (`source` service) that
 * the node will report (wanted) and has not seen (the same error, active or resolved). The poll raises it, and the
 * photo, started at the frame, runs while the poll waits for its permit and goes to the instrument instead of after
 * its answer. A firmware error is raised from the frame itself, its photo then; anything else asks for none.
 */
export function photoAhead(watch: WatchState, frame: ErrorFrame, rules: Rules): boolean {
  if (frame.kind !== 'raised' || frame.error.source !== 'service' || !rules.wanted(frame.error)) return false;
  return unknownToList(watch, frame.error, rules);
}

/** A pushed error with a key that the list's memory (A) does not know as the same error, active or resolved. */
function unknownToList(watch: WatchState, error: PolledError, rules: Rules): boolean {
  const key = rules.keyOf('A', error);
  return key !== undefined && !watch.sources.A.knowsSame(key, asCompared(error));
}

/**
 * Whether the follow-up poll asked for by the frames `heard` while a poll's request was under way is still needed once
 * its answer is in (issue 31). That request may have been answered before a frame's change, so each such frame asks
 * for one more poll; when the answer already shows what every frame said (a raised error listed as pushed, the same
 * error; a resolved id no longer listed), the follow-up would find nothing the frames announced, and is not needed.
 * Anything else (a frame not understood, a firmware error, a list that failed, a listed error another than the one
 * pushed) still needs it. Only the follow-up of frames: a reconnect's or a msg's runs whatever this says.
 */
export function followUpNeeded(heard: readonly ErrorFrame[], results: SourceResult<PolledError>[], rules: Rules): boolean {
  if (heard.length === 0) return false;
  const a = results.find((r) => r.source === 'A');
  if (!a || !('records' in a)) return true;
  const listed = (key: string): PolledError[] => a.records.filter((r) => rules.keyOf('A', r) === key);
  return heard.some((frame) => {
    if (frame.kind === 'resolved') return listed(frame.resolvedId).length > 0;
    if (frame.kind !== 'raised' || frame.error.source !== 'service') return true;
    const key = rules.keyOf('A', frame.error);
    if (key === undefined) return true;
    const under = listed(key);
    return under.length === 0 || !under.every((r) => sameErrorRecords(asCompared(frame.error), r));
  });
}

/**
 * Before a poll is applied: an error raised from the socket as a firmware error that the error list does show was a
 * listed error after all (a frame without a source reads as firmware). It moves, silently, into A's memory, so the
 * poll neither raises it a second time nor misses its resolution.
 */
export function adoptListed(watch: WatchState, results: SourceResult<PolledError>[], rules: Rules): void {
  const firmware = firmwareMemory(watch);
  if (!firmware || firmware.size === 0) return;
  for (const result of results) {
    if (result.source !== 'A' || !('records' in result)) continue;
    for (const record of result.records) {
      const key = rules.keyOf('A', record);
      if (key === undefined) continue;
      const pushed = firmware.activeRecord(key);
      // only the same error: a listed error under the id of an open firmware error is another error (a reused id)
      if (pushed === undefined || !sameErrorRecords(asCompared(pushed), record)) continue;
      if (firmware.resolve(key) !== undefined) watch.sources.A.raise(key, record, true);
    }
  }
}

/**
 * A pushed error as compared with a listed one: without its severity, which the frame reader fills in (a default,
 * or the frame's word mapped to the list's: "info" reads as Warning), so a listed error pushed too is never taken
 * for another error because of it. Title, time stamp and group still tell a reused id apart.
 */
function asCompared(record: unknown): unknown {
  if (!record || typeof record !== 'object') return record;
  return Object.fromEntries(Object.entries(record).filter(([key]) => key.toLowerCase() !== 'severity'));
}

function sameErrorRecords(a: unknown, b: unknown): boolean {
  const x = identityOf(a);
  const y = identityOf(b);
  return x === undefined || y === undefined || sameError(x, y);
}

/**
 * Firmware errors this Node-RED answered (per `answered`, the answer ledger, asked with the error's record so that
 * an answer to another error under the same id does not count): resolved once.
 */
export function resolveAnswered(
  watch: WatchState,
  answered: (key: string, record: unknown) => boolean,
  rules: Rules,
): PushOutcome {
  const firmware = firmwareMemory(watch);
  if (!firmware || firmware.size === 0) return NOTHING;
  const keys = firmware.activeIds().filter((key) => answered(key, firmware.activeRecord(key)));
  if (keys.length === 0) return NOTHING;
  return applyPush<PolledError>(watch, { source: 'A', channel: FIRMWARE_CHANNEL, resolved: keys }, rules);
}

/**
 * Coordinated, before the first sweep under a lease: the firmware errors an earlier holder raised (the shared memory
 * holds them; this replica never heard their frames, a standby ignores the socket) join this watch's firmware memory,
 * silently (they went out). Its open firmware errors count as listed, so the sweep leaves them open, and the frame
 * that resolves one, or an answer, resolves it here as on the replica that raised it. Whether anything changed.
 */
export function adoptPushed(watch: WatchState, raised: readonly { source: string; record: unknown }[], rules: Rules): boolean {
  const firmware = firmwareMemory(watch);
  const pushed = raised
    .map(pushedRecord)
    .filter((record): record is PolledError => record !== undefined)
    .filter((record) => {
      const key = rules.keyOf('A', record);
      // only what this memory knows nothing of: an entry the shared memory still holds under an id this replica has
      // an error under (a newer one pushed since, its resolution of the old not yet recorded) or has seen resolved
      // is stale, and adopting it would put the old error back in place of the new one
      return (
        key !== undefined &&
        !watch.sources.A.knowsSame(key, asCompared(record)) &&
        firmware?.activeRecord(key) === undefined &&
        !firmware?.knowsSame(key, record)
      );
    });
  if (pushed.length === 0) return false;
  const { changed } = applyPush<PolledError>(watch, { source: 'A', channel: FIRMWARE_CHANNEL, raised: pushed }, rules);
  return (firmwareMemory(watch)?.dropOldest(MAX_OPEN_FIRMWARE) ?? 0) > 0 || changed;
}

/**
 * Coordinated, before the first sweep under a lease: the firmware errors this replica raised that another replica
 * reported resolved while this one was a standby (the shared memory no longer holds them; a standby ignores the
 * socket, so it never heard the resolution) leave this watch's firmware memory, silently (their resolved msg went
 * out). Only the very error: another one under the id since stays. Whether anything changed.
 */
export function forgetResolvedElsewhere(
  watch: WatchState,
  gone: readonly { source: string; record: unknown }[],
  rules: Rules,
): boolean {
  const firmware = firmwareMemory(watch);
  if (!firmware || firmware.size === 0) return false;
  let changed = false;
  for (const record of gone.map(pushedRecord)) {
    if (record === undefined) continue;
    const key = rules.keyOf('A', record);
    const open = key === undefined ? undefined : firmware.activeRecord(key);
    if (key === undefined || open === undefined || !sameErrorRecords(open, record)) continue;
    firmware.resolve(key);
    firmware.takeDisplaced(); // several errors under the id: all over, as a resolution frame would end them
    changed = true;
  }
  return changed;
}

/** An error of the shared memory when it is a firmware error of source A (pushed on the socket, never listed). */
function pushedRecord(item: { source: string; record: unknown }): PolledError | undefined {
  const { source, record } = item;
  return source === 'A' && v.isPlainObject(record) && record.source === 'firmware' ? (record as PolledError) : undefined;
}

/** Firmware errors raised and not yet resolved. */
export function openFirmwareErrors(watch: WatchState): number {
  return firmwareMemory(watch)?.size ?? 0;
}

/** The open firmware errors as they were raised (the instrument never lists them: its list alone would leave them out). */
export function openFirmwareRecords(watch: WatchState): PolledError[] {
  const memory = firmwareMemory(watch);
  if (!memory) return [];
  return memory
    .activeIds()
    .map((id) => memory.activeRecord(id))
    .filter((r): r is PolledError => typeof r === 'object' && r !== null);
}

/** The poll's status with the firmware errors still pending counted in. */
export function withFirmwareErrors(status: StatusDecision, watch: WatchState): StatusDecision {
  return status.kind === 'pending' ? { kind: 'pending', count: status.count + openFirmwareErrors(watch) } : status;
}

export type SocketState = 'connecting' | 'connected' | 'disconnected' | 'unavailable';

/** What a state change of the errors socket asks of the node. */
export interface SocketReaction {
  state: SocketState;
  /** poll: whatever happened while the socket was down is caught now */
  pollNow: boolean;
  /**
   * the poll goes through the deploy's pacer: the first connect of the node (or a socket another node already holds
   * open), which the node's first poll, paced too, covers. A reconnect (the socket was down) polls at once, never held.
   */
  paced: boolean;
  /** say once in the log that the instrument has no errors socket (polling only) */
  logUnavailable: boolean;
  /** firmware errors still open after an outage: their resolution may have been pushed meanwhile (log it) */
  openAfterOutage: number;
}

/**
 * The reaction to a socket state change. `saidUnavailable`: whether the log already said this node's instrument
 * has no socket (said once per node and instrument, across redeploys).
 */
export function reactToSocket(
  previous: SocketState,
  next: SocketState,
  openFirmware: number,
  saidUnavailable: boolean,
): SocketReaction {
  return {
    state: next,
    pollNow: next === 'connected',
    paced: next === 'connected' && previous === 'connecting',
    logUnavailable: next === 'unavailable' && !saidUnavailable,
    openAfterOutage: next === 'connected' && previous === 'disconnected' ? openFirmware : 0,
  };
}

/** The "Listen for pushes" setting: on unless switched off (a configuration without it takes the default, on). */
export function listenOf(value: unknown): boolean {
  return value !== false && value !== 'false';
}
