/**
 * The instrument's own controls on interface A (groups Camera, Deck, Enclosure, Lighting, ThermalDevice, Instruments,
 * Power, ServiceSoftwareApi, Traces; see observed-instrument.md, "Deck camera, deck scan, initialise, heater-cooler,
 * lights, traces"): request shapes and deadlines of the hardware-tested client. Inputs are checked here, before any
 * request; writes go through the transport, which audits them.
 */
import { LhError, validationError } from './errors';
import type { Sender } from './prep';
import type { UnsignedSpec } from './session';
import { type ApiResponse, MEDIA_JSON } from './transport';
import * as v from './validate';

type ASpec = Omit<UnsignedSpec, 'api'>;

/** Deadline of a camera image (the hardware-tested client's). */
export const CAMERA_TIMEOUT_MS = 30_000;
/** Deadline of a deck scan. */
export const DECK_SCAN_TIMEOUT_MS = 120_000;
/** Deadline of instruments/initialize: the instrument homes its axes before it answers. */
export const INITIALIZE_TIMEOUT_MS = 180_000;
/** The largest camera image accepted. */
export const MAX_IMAGE_BYTES = 8 * 1024 * 1024;
/**
 * The most pixels of a camera image accepted (an 8K frame is 33 million), and the longest side: 8 MiB of PNG can say
 * 30,000 × 30,000 (a uniform picture compresses a thousandfold), 3.6 GB once decoded by the phone of whoever opens
 * the answer page or the mail client of every inbox on the list.
 */
export const MAX_IMAGE_PIXELS = 50_000_000;
export const MAX_IMAGE_SIDE = 16_384;
/** The heater-cooler set points accepted before sending (whole °C). */
export const MIN_CELSIUS = 0;
export const MAX_CELSIUS = 105;
/** The largest page of traces asked for. */
export const MAX_TRACE_LIMIT = 1000;
/** The largest deck position asked to scan. */
export const MAX_DECK_POSITION = 999;

/** A camera image as received: what node-red-node-email needs to attach it, and when it was taken. */
export interface Snapshot {
  contentType: 'image/png' | 'image/jpeg';
  content: Buffer;
  /** ISO 8601, UTC: when the image arrived */
  takenAt: string;
}

export interface TemperatureStatus {
  currentTemperature: number | null;
  targetTemperature: number | null;
  [field: string]: unknown;
}

/** A colour of the deck lights: each channel 0..255. */
export interface LightColour {
  red: number;
  green: number;
  blue: number;
  white: number;
}

export interface TraceItem {
  date: string;
  message: string;
  [field: string]: unknown;
}

export interface TracePage {
  items: TraceItem[];
  offset: number;
  limit: number;
  [field: string]: unknown;
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG_MAGIC = Buffer.from([0xff, 0xd8, 0xff]);

/** The image type its first bytes say, or undefined when they are neither PNG nor JPEG. */
export function imageType(bytes: Buffer): Snapshot['contentType'] | undefined {
  if (bytes.length >= PNG_MAGIC.length && bytes.subarray(0, PNG_MAGIC.length).equals(PNG_MAGIC)) return 'image/png';
  if (bytes.length >= JPEG_MAGIC.length && bytes.subarray(0, JPEG_MAGIC.length).equals(JPEG_MAGIC)) return 'image/jpeg';
  return undefined;
}

/** JPEG markers of a start of frame (SOF0..SOF15 less DHT, JPG, DAC): the frame's size follows. */
const JPEG_SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/**
 * The width and height an image's header says (PNG: its IHDR; JPEG: its first start of frame before the scan), or
 * undefined when the header cannot be read (too short, or not there). Reads the header only, never the pixels.
 */
export function imageSize(bytes: Buffer): { width: number; height: number } | undefined {
  const type = imageType(bytes);
  if (type === 'image/png') {
    if (bytes.length < 24 || bytes.toString('latin1', 12, 16) !== 'IHDR') return undefined;
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  if (type !== 'image/jpeg') return undefined;
  let i = 2;
  while (i + 1 < bytes.length) {
    // between segments a decoder (libjpeg's next_marker) skips any byte not 0xFF and a stuffed 0xFF 0x00, with a
    // warning, and reads the frame after them: so does this, or such a header would be taken as unread, the image kept
    if (bytes[i] !== 0xff) {
      i += 1;
      continue;
    }
    const marker = bytes[i + 1];
    if (marker === 0xff) {
      i += 1; // a fill byte
      continue;
    }
    if (marker === 0x00) {
      i += 2;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2; // no length
      continue;
    }
    if (marker === 0xda || marker === 0xd9 || i + 4 > bytes.length) return undefined; // the scan (or the end) first
    if (JPEG_SOF.has(marker)) {
      if (i + 9 > bytes.length) return undefined;
      return { width: bytes.readUInt16BE(i + 7), height: bytes.readUInt16BE(i + 5) };
    }
    i += 2 + bytes.readUInt16BE(i + 2);
  }
  return undefined;
}

/** Why an image's size is refused (its header says more pixels than MAX_IMAGE_PIXELS or a longer side), if it is. */
export function oversizedImage(bytes: Buffer): string | undefined {
  const size = imageSize(bytes);
  if (!size) return undefined;
  const { width, height } = size;
  if (width * height <= MAX_IMAGE_PIXELS && width <= MAX_IMAGE_SIDE && height <= MAX_IMAGE_SIDE) return undefined;
  return `${width} × ${height} pixels, over the cap of ${MAX_IMAGE_PIXELS} pixels and ${MAX_IMAGE_SIDE} a side`;
}

/** The camera's answer as a snapshot, or an LhError saying why it is refused (too large, not an image). */
export function readImage(bytes: Buffer, operation: string, takenAt: Date): Snapshot {
  if (bytes.length > MAX_IMAGE_BYTES) {
    throw new LhError(`${operation}: the camera's image is ${bytes.length} bytes, over the cap of ${MAX_IMAGE_BYTES}`, {
      kind: 'response',
      operation,
    });
  }
  const type = imageType(bytes);
  if (!type) {
    throw new LhError(`${operation}: the camera's answer is not an image (neither PNG nor JPEG, ${bytes.length} bytes)`, {
      kind: 'response',
      operation,
    });
  }
  const oversized = oversizedImage(bytes);
  if (oversized) {
    throw new LhError(`${operation}: the camera's image is ${oversized}`, { kind: 'response', operation });
  }
  return { contentType: type, content: bytes, takenAt: takenAt.toISOString() };
}

/** A whole number of °C the heater-cooler accepts here: an integer (or its text) from MIN_CELSIUS to MAX_CELSIUS. */
export function celsius(value: unknown, field = 'temperature', operation = 'heater-start'): number {
  const n = typeof value === 'string' && /^\s*-?\d{1,4}\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < MIN_CELSIUS || n > MAX_CELSIUS) {
    throw validationError(operation, field, `must be a whole number of °C from ${MIN_CELSIUS} to ${MAX_CELSIUS}`, value);
  }
  return n;
}

const CHANNELS = ['red', 'green', 'blue', 'white'] as const;

function channel(value: unknown, field: string, operation: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 255) {
    throw validationError(operation, field, 'must be a whole number from 0 to 255', value);
  }
  return value;
}

/**
 * A colour of the deck lights from `{red, green, blue, white}` (names in any letter case; white 0 when left out) or
 * from the text `#rrggbb` / `#rrggbbww`. Anything else is refused naming the field and the rule.
 */
export function lightColour(value: unknown, field = 'payload', operation = 'lights-custom'): LightColour {
  if (typeof value === 'string') {
    const hex = /^#?([0-9a-f]{6}|[0-9a-f]{8})$/i.exec(value.trim());
    if (!hex) throw validationError(operation, field, 'must be a colour "#rrggbb" or "#rrggbbww" (hex)', value);
    const n = (i: number): number => parseInt(hex[1].slice(i * 2, i * 2 + 2) || '00', 16);
    return { red: n(0), green: n(1), blue: n(2), white: n(3) };
  }
  if (!v.isPlainObject(value)) {
    throw validationError(operation, field, 'must be {red, green, blue, white} (0 to 255 each) or "#rrggbb"', value);
  }
  const out: Partial<LightColour> = {};
  for (const [key, given] of Object.entries(value)) {
    if (given === undefined) continue; // left out, as JSON would drop it: white 0, a colour channel then required
    const name = key.toLowerCase() as (typeof CHANNELS)[number];
    if (!CHANNELS.includes(name))
      throw validationError(operation, `${field}.${key}`, 'is not a colour channel (red, green, blue, white)');
    if (out[name] !== undefined) throw validationError(operation, `${field}.${key}`, 'is given twice');
    out[name] = channel(given, `${field}.${key}`, operation);
  }
  for (const name of ['red', 'green', 'blue'] as const) {
    if (out[name] === undefined) throw validationError(operation, `${field}.${name}`, 'is required (0 to 255)');
  }
  return { red: out.red as number, green: out.green as number, blue: out.blue as number, white: out.white ?? 0 };
}

/** A deck position to scan: a whole number from 1 to MAX_DECK_POSITION (or its text). */
export function deckPosition(value: unknown, field = 'position', operation = 'deck-scan'): number {
  const n = typeof value === 'string' && /^\s*\d{1,4}\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_DECK_POSITION) {
    throw validationError(operation, field, `must be a deck position, a whole number from 1 to ${MAX_DECK_POSITION}`, value);
  }
  return n;
}

export interface TraceQuery {
  offset?: unknown;
  limit?: unknown;
  /** a trace source such as MNE; empty: all */
  sources?: unknown;
}

/** offset (>= 0, default 0), limit (1..MAX_TRACE_LIMIT, default 50), sources (letters and digits, up to 32). */
export function traceQuery(q: TraceQuery, operation = 'traces'): { offset: number; limit: number; sources?: string } {
  const whole = (value: unknown, field: string, min: number, max: number, fallback: number): number => {
    if (value === undefined || value === null || value === '') return fallback;
    const n = typeof value === 'string' && /^\s*\d{1,9}\s*$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      throw validationError(operation, field, `must be a whole number from ${min} to ${max}`, value);
    }
    return n;
  };
  const offset = whole(q.offset, 'offset', 0, v.INT32_MAX, 0);
  const limit = whole(q.limit, 'limit', 1, MAX_TRACE_LIMIT, 50);
  const src = q.sources;
  if (src === undefined || src === null || src === '') return { offset, limit };
  if (typeof src !== 'string' || !/^[A-Za-z0-9_]{1,32}$/.test(src)) {
    throw validationError(operation, 'sources', 'must be a trace source name (letters, digits, _; up to 32), e.g. MNE', src);
  }
  return { offset, limit, sources: src };
}

function flagOf(body: unknown): boolean | undefined {
  if (typeof body === 'boolean') return body;
  if (body === 'true' || body === 'false') return body === 'true';
  if (v.isPlainObject(body)) {
    const values = Object.values(body).filter((x) => typeof x === 'boolean');
    if (values.length === 1) return values[0] as boolean;
  }
  return undefined;
}

const temperature = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

export class DeckApi {
  constructor(private readonly sendA: Sender) {}

  private send<T>(spec: ASpec): Promise<ApiResponse<T>> {
    return this.sendA<T>({ ...spec, api: 'A' });
  }

  /** A camera image (`rectified`: the corrected view, as the tested client asks by default). */
  async snapshot(rectified = true): Promise<Snapshot> {
    const op = 'snapshot';
    const res = await this.send<Buffer>({
      method: 'GET',
      path: `/camera/${rectified ? 'true' : 'false'}`,
      operation: op,
      idempotent: true,
      responseType: 'buffer',
      accept: 'image/png, image/jpeg;q=0.9',
      minTimeoutMs: CAMERA_TIMEOUT_MS,
      // a body past the cap is not read on (a camera answering a raw frame or a stream would otherwise be read up to
      // the transport's 32 MiB before being refused, per photo in flight)
      maxResponseBytes: MAX_IMAGE_BYTES,
    });
    return readImage(Buffer.isBuffer(res.data) ? res.data : Buffer.alloc(0), op, new Date());
  }

  /** The instrument's scan of one deck position, as it answers (its shape is not published). */
  async deckScan(position: unknown): Promise<unknown> {
    const op = 'deck-scan';
    const res = await this.send<unknown>({
      method: 'GET',
      path: `/deck/scan/${deckPosition(position, 'position', op)}`,
      operation: op,
      idempotent: true,
      minTimeoutMs: DECK_SCAN_TIMEOUT_MS,
    });
    return res.data ?? null;
  }

  /** Homes the instrument. Never resent automatically: it moves hardware. */
  async initialize(): Promise<void> {
    await this.send({
      method: 'POST',
      path: '/instruments/initialize',
      operation: 'initialize',
      idempotent: false,
      minTimeoutMs: INITIALIZE_TIMEOUT_MS,
    });
  }

  isInitialized(): Promise<boolean> {
    return this.flag('/power/is-initialized', 'is-initialized');
  }

  isParked(): Promise<boolean> {
    return this.flag('/service-software-api/is-parked', 'is-parked');
  }

  hasTips(): Promise<boolean> {
    return this.flag('/service-software-api/has-tips', 'has-tips');
  }

  async temperatureStatus(): Promise<TemperatureStatus> {
    const op = 'heater-status';
    const res = await this.send<unknown>({
      method: 'GET',
      path: '/thermal-device/hhc/temperature-status',
      operation: op,
      idempotent: true,
    });
    const body = res.data;
    if (!v.isPlainObject(body)) {
      throw new LhError(`${op}: expected {currentTemperature, targetTemperature} from the instrument`, {
        kind: 'response',
        operation: op,
        body,
      });
    }
    return {
      ...body,
      currentTemperature: temperature(body.currentTemperature),
      targetTemperature: temperature(body.targetTemperature),
    };
  }

  /** Starts temperature control at `target` °C (sent as a bare JSON integer); returns the value sent. */
  async startTemperatureControl(target: unknown): Promise<number> {
    const op = 'heater-start';
    const value = celsius(target, 'temperature', op);
    await this.send({
      method: 'PUT',
      path: '/thermal-device/hhc/start-temperature-control',
      operation: op,
      mediaType: MEDIA_JSON,
      body: value,
      idempotent: true,
    });
    return value;
  }

  async stopTemperatureControl(): Promise<void> {
    await this.send({
      method: 'PUT',
      path: '/thermal-device/hhc/stop-temperature-control',
      operation: 'heater-stop',
      idempotent: true,
    });
  }

  /** The deck lights as the instrument reports them (`deckLightsSetting`, or the whole answer when it lacks that). */
  async lighting(): Promise<unknown> {
    const res = await this.send<unknown>({ method: 'GET', path: '/lighting', operation: 'lights-get', idempotent: true });
    const body = res.data;
    return v.isPlainObject(body) && body.deckLightsSetting !== undefined ? body.deckLightsSetting : (body ?? null);
  }

  /**
   * Custom lighting, then the colour `{Red, Green, Blue, White}`, as the tested client sends them; returns the colour.
   * `field`: where the colour came from, named by a refusal.
   */
  async setCustomLighting(colour: unknown, field = 'payload'): Promise<LightColour> {
    const op = 'lights-custom';
    const c = lightColour(colour, field, op);
    await this.send({ method: 'POST', path: '/enclosure/set-custom-lighting', operation: op, idempotent: false });
    await this.send({
      method: 'POST',
      path: '/enclosure',
      operation: 'lights-colour',
      mediaType: MEDIA_JSON,
      body: { Red: c.red, Green: c.green, Blue: c.blue, White: c.white },
      idempotent: false,
    });
    return c;
  }

  async setAutomaticLighting(): Promise<void> {
    await this.send({
      method: 'POST',
      path: '/enclosure/set-automatic-lighting',
      operation: 'lights-automatic',
      idempotent: false,
    });
  }

  /** One page of the instrument's traces (newest first as the instrument gives them). */
  async traces(query: TraceQuery = {}): Promise<TracePage> {
    const op = 'traces';
    const q = traceQuery(query, op);
    const res = await this.send<unknown>({
      method: 'GET',
      path: '/traces',
      operation: op,
      query: { offset: q.offset, limit: q.limit, ...(q.sources ? { sources: q.sources } : {}) },
      idempotent: true,
    });
    const body = res.data;
    // `items: null` is what ASP.NET makes of an empty list left null: no traces (as a null list of run records)
    const listed = v.isPlainObject(body) ? (body.items === null ? [] : body.items) : undefined;
    const list = Array.isArray(body) ? body : Array.isArray(listed) ? listed : undefined;
    if (!list)
      throw new LhError(`${op}: expected {items: [{date, message}]} from the instrument`, {
        kind: 'response',
        operation: op,
        body,
      });
    const items = list
      .filter((i): i is Record<string, unknown> => v.isPlainObject(i))
      .slice(0, q.limit)
      .map((i) => ({ ...i, date: String(i.date ?? ''), message: String(i.message ?? '') }));
    const rest = v.isPlainObject(body) ? body : {};
    return { ...rest, items, offset: q.offset, limit: q.limit };
  }

  private async flag(path: string, op: string): Promise<boolean> {
    const res = await this.send<unknown>({ method: 'GET', path, operation: op, idempotent: true });
    const value = flagOf(res.data);
    if (value === undefined) {
      throw new LhError(`${op}: expected true or false from the instrument`, { kind: 'response', operation: op, body: res.data });
    }
    return value;
  }
}
