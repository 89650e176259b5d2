/**
 * The instrument's own controls on A (observed-instrument.md, "Deck camera, deck scan, initialise, heater-cooler,
 * lights, traces"): a camera picture drawn from the state, deck scans, initialise (a few seconds of homing), the
 * heater-cooler moving toward its target over time, the deck lights, the sensors and the traces of what it did.
 * It refuses what a real instrument refuses: initialise while a run is in progress or while it is initialising,
 * a temperature that is not a whole number in range, a colour channel outside 0..255, a deck position it lacks.
 */
import { DECK_POSITIONS, deckPng } from './deck-image';
import { isObject } from './json-fields';
import { badRequest, HttpProblem, notFound, unauthorized } from './problem';
import type { Reply, Route } from './router';
import type { RunMachine } from './run-machine';
import type { TimerSet } from './timers';
import type { PendingError } from './types';

const V1 = '/api/v1';
export const AMBIENT_CELSIUS = 22;
/** How fast the heater-cooler moves toward its target, °C per second. */
export const CELSIUS_PER_SECOND = 0.5;
/** How long the simulated homing takes. */
export const INITIALIZE_MS = 3000;
export const MIN_SET_CELSIUS = 4;
export const MAX_SET_CELSIUS = 105;
const MAX_TRACES = 500;

export interface DeckOptions {
  /** false: the camera routes answer 404 (an instrument without a camera) */
  camera: boolean;
  /** the camera answers text instead of an image (a broken camera service) */
  cameraNotImage: boolean;
  /** the camera answers 401 whatever the token (a user without the camera permission, a camera service refusing) */
  cameraRefuses: boolean;
}

interface Colour {
  red: number;
  green: number;
  blue: number;
  white: number;
}

const AUTOMATIC: Colour = { red: 255, green: 255, blue: 240, white: 200 };

export interface DeckDeps {
  timers: TimerSet;
  now(): number;
  runs: RunMachine;
  pendingErrors(): readonly PendingError[];
}

/** The deck's state: what the camera sees, the heater-cooler, the lights, initialisation and the traces. */
export class DeckSim {
  options: DeckOptions = { camera: true, cameraNotImage: false, cameraRefuses: false };
  initialized = true;
  private initializing = false;
  private lights: { mode: 'Automatic' | 'Custom'; colour: Colour } = { mode: 'Automatic', colour: { ...AUTOMATIC } };
  private customPending = false;
  /** temperature control: the target (null: off), and where the temperature was when it last changed course */
  private heater: { target: number | null; from: number; since: number };
  private readonly traceLog: { date: string; message: string; source: string }[] = [];
  private cancelInit?: () => void;

  constructor(private readonly deps: DeckDeps) {
    this.heater = { target: null, from: AMBIENT_CELSIUS, since: deps.now() };
  }

  reset(): void {
    this.cancelInit?.();
    this.options = { camera: true, cameraNotImage: false, cameraRefuses: false };
    this.initialized = true;
    this.initializing = false;
    this.lights = { mode: 'Automatic', colour: { ...AUTOMATIC } };
    this.customPending = false;
    this.heater = { target: null, from: AMBIENT_CELSIUS, since: this.deps.now() };
    this.traceLog.length = 0;
  }

  /** PUT /sim/deck-style changes: camera offered, camera broken, initialised. */
  configure(body: unknown): DeckOptions & { initialized: boolean } {
    if (body !== undefined && body !== null) {
      if (!isObject(body)) throw new RangeError('the deck options must be a JSON object');
      for (const key of ['camera', 'cameraNotImage', 'cameraRefuses', 'initialized'] as const) {
        if (body[key] === undefined) continue;
        if (typeof body[key] !== 'boolean') throw new RangeError(`${key} must be a boolean`);
        if (key === 'initialized') this.initialized = body[key];
        else this.options[key] = body[key];
      }
    }
    return { ...this.options, initialized: this.initialized };
  }

  get traces(): readonly { date: string; message: string; source: string }[] {
    return this.traceLog;
  }

  /** The temperature now: moving from where it was toward the target (or back to ambient) at CELSIUS_PER_SECOND. */
  temperature(now = this.deps.now()): number {
    const goal = this.heater.target ?? AMBIENT_CELSIUS;
    const moved = ((now - this.heater.since) / 1000) * CELSIUS_PER_SECOND;
    const t = goal >= this.heater.from ? Math.min(goal, this.heater.from + moved) : Math.max(goal, this.heater.from - moved);
    return Math.round(t * 10) / 10;
  }

  private trace(message: string): void {
    this.traceLog.unshift({ date: new Date(this.deps.now()).toISOString(), message, source: 'MNE' });
    if (this.traceLog.length > MAX_TRACES) this.traceLog.length = MAX_TRACES;
  }

  private runInProgress(): boolean {
    return this.deps.runs.state !== 'Idle';
  }

  initialize(): void {
    if (this.runInProgress()) throw new HttpProblem(409, 'The instrument cannot be initialized while a run is in progress.');
    if (this.initializing) throw new HttpProblem(409, 'The instrument is already initializing.');
    this.initializing = true;
    this.initialized = false;
    this.trace('["Initialize","started"]');
    this.cancelInit = this.deps.timers.schedule(INITIALIZE_MS, () => {
      this.initializing = false;
      this.initialized = true;
      this.trace('["Initialize","completed"]');
    });
  }

  startHeater(body: unknown): void {
    if (typeof body !== 'number' || !Number.isInteger(body)) {
      throw badRequest('$', 'The temperature must be a whole number of °C.');
    }
    if (body < MIN_SET_CELSIUS || body > MAX_SET_CELSIUS) {
      throw badRequest('$', `The temperature must be from ${MIN_SET_CELSIUS} to ${MAX_SET_CELSIUS} °C.`);
    }
    this.heater = { target: body, from: this.temperature(), since: this.deps.now() };
    this.trace(`["ThermalDevice","hhc","StartTemperatureControl",${body}]`);
  }

  stopHeater(): void {
    this.heater = { target: null, from: this.temperature(), since: this.deps.now() };
    this.trace('["ThermalDevice","hhc","StopTemperatureControl"]');
  }

  setCustom(): void {
    this.customPending = true;
    this.lights = { ...this.lights, mode: 'Custom' };
    this.trace('["Enclosure","SetCustomLighting"]');
  }

  setColour(body: unknown): void {
    if (!isObject(body)) throw badRequest('$', 'The lighting must be an object {Red, Green, Blue, White}.');
    if (this.lights.mode !== 'Custom' && !this.customPending) {
      throw new HttpProblem(409, 'Custom lighting is not enabled: call enclosure/set-custom-lighting first.');
    }
    const lower = new Map(Object.entries(body).map(([k, v]) => [k.toLowerCase(), v]));
    const colour: Partial<Colour> = {};
    for (const name of ['red', 'green', 'blue', 'white'] as const) {
      const value = lower.get(name);
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 255) {
        throw badRequest(name[0].toUpperCase() + name.slice(1), 'Must be a whole number from 0 to 255.');
      }
      colour[name] = value;
    }
    this.lights = { mode: 'Custom', colour: colour as Colour };
    this.trace(`["Enclosure","SetLighting",${JSON.stringify(colour)}]`);
  }

  setAutomatic(): void {
    this.customPending = false;
    this.lights = { mode: 'Automatic', colour: { ...AUTOMATIC } };
    this.trace('["Enclosure","SetAutomaticLighting"]');
  }

  lighting(): Record<string, unknown> {
    return { deckLightsSetting: { mode: this.lights.mode, ...this.lights.colour } };
  }

  /** The position of the first pending error: "position N" or "P N" in its text, else one drawn from its id. */
  errorPosition(): number | undefined {
    const error = this.deps.pendingErrors()[0];
    if (!error) return undefined;
    const text = `${error.title ?? ''} ${error.message ?? ''}`;
    const named = /\b(?:position\s*|P)(\d{1,2})\b/i.exec(text);
    const n = named ? Number(named[1]) : undefined;
    if (n !== undefined && n >= 1 && n <= DECK_POSITIONS) return n;
    let h = 0;
    for (const c of String(error.id)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return (h % DECK_POSITIONS) + 1;
  }

  camera(): Reply {
    if (!this.options.camera) throw notFound('No camera is installed.');
    if (this.options.cameraRefuses) throw unauthorized('The camera is not available to this user.');
    if (this.options.cameraNotImage)
      return { status: 200, body: 'camera service unavailable', headers: { 'Content-Type': 'text/plain' } };
    const plates = this.runInProgress() ? [1, 2, 3, 5, 6] : [];
    const png = deckPng({ light: this.lights.colour, plates, errorAt: this.errorPosition() });
    this.trace('["Camera","Snapshot"]');
    return { status: 200, body: png, headers: { 'Content-Type': 'image/png' } };
  }

  scan(param: string): Reply {
    const n = /^\d{1,3}$/.test(param) ? Number(param) : NaN;
    if (!(n >= 1 && n <= DECK_POSITIONS)) throw notFound(`No deck position ${param}.`);
    if (!this.initialized) throw new HttpProblem(409, 'The instrument is not initialized.');
    const occupied = this.runInProgress() && [1, 2, 3, 5, 6].includes(n);
    this.trace(`["Deck","Scan",${n}]`);
    return { status: 200, body: { position: n, occupied, labware: occupied ? 'Plate 96 well' : null } };
  }

  tracePage(query: Record<string, string>): Record<string, unknown> {
    const offset = Math.max(0, Number(query.offset ?? 0) || 0);
    const limit = Math.min(1000, Math.max(1, Number(query.limit ?? 50) || 50));
    const source = query.sources;
    const all = source ? this.traceLog.filter((t) => t.source === source) : this.traceLog;
    return { items: all.slice(offset, offset + limit), totalCount: all.length };
  }

  heaterStatus(): Record<string, unknown> {
    return { currentTemperature: this.temperature(), targetTemperature: this.heater.target };
  }
}

export function deckRoutes(deck: DeckSim): Route[] {
  const ok = (body: unknown): Reply => ({ status: 200, body });
  const done = (fn: () => void): Reply => (fn(), { status: 200 });
  const get = (pattern: string, handle: Route['handle']): Route => ({
    method: 'GET',
    pattern: `${V1}/${pattern}`,
    body: 'none',
    auth: true,
    handle,
  });
  return [
    get('camera/{rectified}', (ctx) => {
      if (!/^(true|false)$/i.test(ctx.params.rectified)) throw badRequest('rectified', 'Must be true or false.');
      return deck.camera();
    }),
    get('deck/scan/{position}', (ctx) => deck.scan(ctx.params.position)),
    {
      method: 'POST',
      pattern: `${V1}/instruments/initialize`,
      body: 'none',
      auth: true,
      handle: () => done(() => deck.initialize()),
    },
    get('power/is-initialized', () => ok(deck.initialized)),
    get('service-software-api/is-parked', () => ok(deck.initialized)),
    get('service-software-api/has-tips', () => ok(false)),
    get('thermal-device/hhc/temperature-status', () => ok(deck.heaterStatus())),
    {
      method: 'PUT',
      pattern: `${V1}/thermal-device/hhc/start-temperature-control`,
      body: 'json',
      auth: true,
      handle: (ctx) => done(() => deck.startHeater(ctx.body)),
    },
    {
      method: 'PUT',
      pattern: `${V1}/thermal-device/hhc/stop-temperature-control`,
      body: 'none',
      auth: true,
      handle: () => done(() => deck.stopHeater()),
    },
    get('lighting', () => ok(deck.lighting())),
    {
      method: 'POST',
      pattern: `${V1}/enclosure/set-custom-lighting`,
      body: 'none',
      auth: true,
      handle: () => done(() => deck.setCustom()),
    },
    {
      method: 'POST',
      pattern: `${V1}/enclosure/set-automatic-lighting`,
      body: 'none',
      auth: true,
      handle: () => done(() => deck.setAutomatic()),
    },
    {
      method: 'POST',
      pattern: `${V1}/enclosure`,
      body: 'json',
      auth: true,
      handle: (ctx) => done(() => deck.setColour(ctx.body)),
    },
    get('traces', (ctx) => ok(deck.tracePage(ctx.query))),
  ];
}
