/**
 * Deck camera snapshots for raised errors (issue 33): one taker per instrument client that never lets a photo hold up
 * a notification for more than SNAPSHOT_WAIT_MS, takes at most one photo per SNAPSHOT_MIN_INTERVAL_MS (errors raised
 * together share it), joins a photo already being taken, and backs off from an instrument without a camera. What the
 * msg gets: `msg.snapshot = {contentType, content, takenAt}` and `msg.attachments` as node-red-node-email sends them,
 * or `msg.snapshotError` saying why there is none.
 */
import { LhError, type LiquidHandlerClient, MAX_IMAGE_BYTES, oversizedImage, type Snapshot } from '../../client';
import { findHome, homeOf, slot } from '../../instrument';
import { PollPermits, pollPermits } from '../shared/poll-permits';
import { redact } from '../shared/redaction';

/** The longest a notification waits for its photo. */
export const SNAPSHOT_WAIT_MS = 2000;
/** At most one photo per instrument in this time; errors raised meanwhile get the same photo (or the same reason). */
export const SNAPSHOT_MIN_INTERVAL_MS = 10_000;
/**
 * After a 404 (no camera) or 501, or a 401 that the fresh login it led to did not cure (the camera refuses this user),
 * the camera is not asked again for this long: a camera answering 401 to every token would otherwise cost a login per
 * photo, one every SNAPSHOT_MIN_INTERVAL_MS for as long as errors are raised. A Test connection that logs in, or the
 * lh-server node redeployed, asks it again at once.
 */
export const NO_CAMERA_RETRY_MS = 10 * 60_000;

export type SnapshotResult = { snapshot: Snapshot } | { error: string };

/** What node-red-node-email attaches: one entry of `msg.attachments` (nodemailer's shape). */
export interface EmailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

/** The msg properties of a photo: `snapshot`, and `attachments` (what `existing` held, then the photo). */
export function snapshotMsgFields(
  shot: Snapshot,
  name: string,
  existing?: unknown,
): { snapshot: Snapshot; attachments: unknown[] } {
  const stamp = shot.takenAt.replace(/[:.]/g, '-');
  const ext = shot.contentType === 'image/jpeg' ? 'jpg' : 'png';
  const safe = name.replace(/[^\w.-]/g, '_').slice(0, 60) || 'deck';
  const attachment: EmailAttachment = {
    filename: `${safe}-${stamp}.${ext}`,
    content: shot.content,
    contentType: shot.contentType,
  };
  return {
    snapshot: { contentType: shot.contentType, content: shot.content, takenAt: shot.takenAt },
    attachments: [...(Array.isArray(existing) ? existing : []), attachment],
  };
}

function reasonOf(err: unknown): string {
  return redact(rawReason(err));
}

/** A camera answer that backs off for NO_CAMERA_RETRY_MS: no camera, or a 401 to the camera request itself. */
function backsOff(err: unknown): boolean {
  if (!(err instanceof LhError)) return false;
  if (err.statusCode === 404 || err.statusCode === 501) return true;
  // the session answers a 401 with one fresh login and one more try (or, for a token a 401 made it log in for less
  // than 10 s ago, with no login): a 401 still here is the camera refusing this user, not an ended session. A refused
  // login (operation authenticate) is the login holds' business, not the camera's.
  return err.statusCode === 401 && err.operation === 'snapshot';
}

function rawReason(err: unknown): string {
  if (err instanceof LhError) {
    if (err.statusCode === 404 || err.statusCode === 501)
      return 'the instrument has no camera (it answered ' + err.statusCode + ')';
    if (err.statusCode === 401 && err.operation === 'snapshot')
      return `the camera refused this user (401) even after a fresh login: it is asked again in ${NO_CAMERA_RETRY_MS / 60_000} minutes, or at once after a Test connection or a redeploy of the lh-server node`;
    if (err.kind === 'timeout') return 'the camera did not answer in time';
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Room for a new photo request: a slot to hold until the photo is done, or undefined when there is none (the error
 * poll gives none while its polls wait for permits, issue 31: a burst across the fleet, and beyond
 * MAX_PHOTOS_IN_FLIGHT camera requests).
 */
export type PhotoRoom = () => (() => void) | undefined;

/** Why a raised error has no photo when there was no room for one (`msg.snapshotError`); not said in the log. */
export const BUSY_REASON =
  'no photo taken: this Node-RED was busy (a burst of errors across its instruments, or many cameras slow to answer), and the notification does not wait for one';

/**
 * Camera requests in flight at most, process-wide, for raised errors (issue 31): photos never take the permits of the
 * polls (a fleet of cameras that hang until the request timeout would otherwise hold the polls back), and beyond
 * this many a raised error goes on without one.
 */
export const MAX_PHOTOS_IN_FLIGHT = 32;

/** The permits of the photos of every error poll and answer page node of this Node-RED. */
export const photoPermits = new PollPermits(MAX_PHOTOS_IN_FLIGHT);

/**
 * Room for a deck photo in this Node-RED: none while polls wait for permits (a burst), none beyond
 * MAX_PHOTOS_IN_FLIGHT. Every camera request for errors takes it: lh-error-poll's with a raised error, the answer
 * page's as it makes a link and for its fresh-photo button.
 */
export const photoRoom: PhotoRoom = () => (pollPermits.busy ? undefined : photoPermits.tryAcquire());

/** One instrument's camera as notifications use it: bounded waits, a rate limit, one photo in flight. */
export class SnapshotTaker {
  private last?: { at: number; result: SnapshotResult };
  private inFlight?: Promise<SnapshotResult>;
  private noCameraUntil = 0;

  constructor(
    private readonly capture: () => Promise<Snapshot>,
    private readonly minIntervalMs = SNAPSHOT_MIN_INTERVAL_MS,
  ) {}

  /**
   * Starts a photo now unless one is under way, a recent one will serve, the instrument has no camera, or `room`
   * gives no slot: an error pushed on the socket (issue 31) gets its photo while its poll goes to the instrument, and
   * `take()` finds it (the same photo within the interval). Never rejects.
   */
  prefetch(room?: PhotoRoom): void {
    if (!this.fresh(Date.now()) && !this.inFlight) this.start(room);
  }

  /**
   * A photo within `waitMs`, or why there is none; never rejects. A new photo needs a slot of `room` (when given):
   * without one, BUSY_REASON at once (a recent photo or one under way still serves).
   */
  async take(waitMs = SNAPSHOT_WAIT_MS, room?: PhotoRoom): Promise<SnapshotResult> {
    const fresh = this.fresh(Date.now());
    if (fresh) return fresh;
    const photo = this.inFlight ?? this.start(room);
    if (!photo) return { error: BUSY_REASON };
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<SnapshotResult>((resolve) => {
      timer = setTimeout(
        () => resolve({ error: `the camera did not answer within ${waitMs / 1000} s: the notification went on without a photo` }),
        waitMs,
      );
    });
    try {
      return await Promise.race([photo, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A new photo, holding a slot of `room` (if given) until it is done; undefined when there is no slot. */
  private start(room?: PhotoRoom): Promise<SnapshotResult> | undefined {
    const release = room ? room() : () => undefined;
    if (!release) return undefined;
    const photo = (this.inFlight = this.shoot());
    void photo.then(release); // shoot() never rejects
    return photo;
  }

  /**
   * The last result when it still serves: within the interval, or while the instrument counts as without a camera.
   * Wall-clock times: one "in the future" (the clock was set back since) no longer serves, or the last result (a camera
   * error, "no camera") would stand for every error raised for as long as the step.
   */
  private fresh(now: number): SnapshotResult | undefined {
    if (!this.last) return undefined;
    const noCamera = now < this.noCameraUntil && this.noCameraUntil - now <= NO_CAMERA_RETRY_MS;
    const recent = now >= this.last.at && now - this.last.at < this.minIntervalMs;
    return noCamera || recent ? this.last.result : undefined;
  }

  private async shoot(): Promise<SnapshotResult> {
    let result: SnapshotResult;
    try {
      result = { snapshot: await this.capture() };
    } catch (err) {
      result = { error: reasonOf(err) };
      if (backsOff(err)) this.noCameraUntil = Date.now() + NO_CAMERA_RETRY_MS;
    }
    const last = (this.last = { at: Date.now(), result });
    this.inFlight = undefined;
    // a photo serves errors raised within the interval, then is let go: the deck's picture (plates, labels, hands) is
    // not kept in memory past that (the page node keeps its own copy until the link expires), nor 8 MiB per instrument
    if ('snapshot' in result) {
      const timer = setTimeout(() => {
        if (this.last === last) this.last = undefined;
      }, this.minIntervalMs);
      timer.unref?.();
    }
    return result;
  }

  /**
   * Asks the camera again at the next photo (a Test connection that logged in): the back-off after a 404 or a refusal
   * ends, and a result kept from it no longer serves. A photo in flight is left to finish.
   */
  askAgain(): void {
    this.noCameraUntil = 0;
    if (this.last && !('snapshot' in this.last.result)) this.last = undefined;
  }

  /** Whether a photo is kept (tests): for SNAPSHOT_MIN_INTERVAL_MS after it was taken, no longer. */
  get holdsPhoto(): boolean {
    return this.last !== undefined && 'snapshot' in this.last.result;
  }
}

/**
 * The camera of one instrument as this Node-RED's nodes ask it, kept in the instrument's home: one photo per 10 s and
 * one in flight per instrument, whichever of its lh-server nodes the asking node uses (two lh-server nodes of one
 * instrument used to make two takers, and two camera requests for one error). A photo goes through the newest client
 * still open: a redeployed lh-server's closed client is dropped. When the last lh-server node of the instrument
 * closes (the home closes), it starts afresh, as a new client's did: a camera fixed meanwhile is asked at once.
 */
class InstrumentCamera {
  private clients: LiquidHandlerClient[] = [];
  taker = new SnapshotTaker(() => this.capture());

  close(): void {
    this.clients = [];
    this.taker = new SnapshotTaker(() => this.capture());
  }

  use(client: LiquidHandlerClient): void {
    this.clients = [...this.clients.filter((c) => c !== client && !c.transport.isClosed), client];
  }

  /**
   * Through the newest client still open; a request that failed because its client closed meanwhile (its lh-server
   * node removed or redeployed while another stays) is asked again through the next one: its failure is no answer of
   * the camera, and the taker would keep it for SNAPSHOT_MIN_INTERVAL_MS for every node of the instrument.
   */
  private async capture(): Promise<Snapshot> {
    for (;;) {
      this.clients = this.clients.filter((c) => !c.transport.isClosed);
      const client = this.clients[this.clients.length - 1];
      if (!client) throw new LhError('the connection to the instrument was closed', { kind: 'network', operation: 'snapshot' });
      try {
        return await client.deck.snapshot(true);
      } catch (err) {
        if (!client.transport.isClosed) throw err;
      }
    }
  }
}

const CAMERA = slot('deck-camera', () => new InstrumentCamera());

export function snapshotTaker(client: LiquidHandlerClient): SnapshotTaker {
  const camera = homeOf(`${client.baseUrl}|${client.instrumentUrl ?? ''}`).slot(CAMERA);
  camera.use(client);
  return camera.taker;
}

/**
 * The camera of the instrument `client` talks to is asked again at the next photo (a Test connection of its lh-server
 * node that logged in): a back-off after no camera or a refusal ends. Nothing when no node of it took photos.
 */
export function askCameraAgain(client: LiquidHandlerClient): void {
  const home = findHome(`${client.baseUrl}|${client.instrumentUrl ?? ''}`);
  if (home?.has(CAMERA)) home.slot(CAMERA).taker.askAgain();
}

/** What a node hooks in: gives raised-error msgs their photo (or the reason there is none). */
export interface SnapshotHook {
  /** Resolves within SNAPSHOT_WAIT_MS (plus a tick) with the same msgs, decorated; never rejects. */
  attach<T extends Record<string, unknown>>(msgs: T[]): Promise<T[]>;
  /** An error is about to be raised (pushed, its poll under way): the photo starts now, and `attach` then finds it. */
  ahead(): void;
}

/**
 * `warn` is told each new reason once (a camera refusing every photo is said once, not per error); a photo that a
 * burst left no room for (`room`, see PhotoRoom) is said on the msg only, as it is no fault of the camera.
 */
export function snapshotHook(taker: SnapshotTaker | undefined, warn: (text: string) => void, room?: PhotoRoom): SnapshotHook {
  let lastReason = '';
  return {
    ahead() {
      taker?.prefetch(room);
    },
    async attach(msgs) {
      if (!taker || msgs.length === 0) return msgs;
      let result: SnapshotResult;
      try {
        result = await taker.take(SNAPSHOT_WAIT_MS, room);
      } catch (err) {
        result = { error: reasonOf(err) };
      }
      for (const msg of msgs) {
        if ('snapshot' in result) {
          const name =
            typeof msg.errorId === 'string' || typeof msg.errorId === 'number' ? `deck-${String(msg.errorId)}` : 'deck';
          Object.assign(msg, snapshotMsgFields(result.snapshot, name, msg.attachments));
          delete msg.snapshotError;
        } else (msg as Record<string, unknown>).snapshotError = result.error;
      }
      if ('error' in result && result.error !== lastReason && result.error !== BUSY_REASON) {
        lastReason = result.error;
        warn(`no deck photo with the error: ${result.error}`);
      } else if ('snapshot' in result) lastReason = '';
      return msgs;
    },
  };
}

/** A msg's `snapshot` when it is one (an image under the caps of bytes and pixels), else undefined. */
export function snapshotIn(msg: Record<string, unknown>): Snapshot | undefined {
  const s = msg.snapshot as Partial<Snapshot> | undefined;
  if (!s || typeof s !== 'object' || !Buffer.isBuffer(s.content)) return undefined;
  if (s.contentType !== 'image/png' && s.contentType !== 'image/jpeg') return undefined;
  if (s.content.length > MAX_IMAGE_BYTES || oversizedImage(s.content) !== undefined) return undefined;
  return { contentType: s.contentType, content: s.content, takenAt: typeof s.takenAt === 'string' ? s.takenAt : '' };
}
