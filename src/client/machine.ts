/**
 * What the workstation says about itself (interface A, beyond interfaces.md; see observed-instrument.md): system
 * ready, who controls it, door and enclosure sensors, name and serial number, software versions. An instrument
 * that does not offer one of these reads answers 404: the read gives `undefined` and the caller goes on without it.
 */
import { LhError } from './errors';
import type { Sender } from './prep';
import * as v from './validate';

export interface SystemReady {
  isServerReady: boolean;
  /** services the instrument reports as not running */
  stoppedServices: string[];
}

export interface ConnectionStatus {
  isControlled: boolean;
  controllerMachineName?: string;
  controllerUserName?: string;
}

export interface SensorStatus {
  isDoorClosed?: boolean;
  isEnclosurePresent?: boolean;
}

export interface MachineInfo {
  instrumentName?: string;
  serialNumber?: string;
  isEnclosurePresent?: boolean;
}

export interface SoftwareVersion {
  name: string;
  version: string;
}

export interface MachineIdentity extends MachineInfo {
  softwareVersions: SoftwareVersion[];
}

/** What the instrument answered before a start; a field is undefined when the instrument does not offer that read. */
export interface StartReadiness {
  systemReady?: SystemReady;
  connection?: ConnectionStatus;
  sensors?: SensorStatus;
}

const text = (x: unknown): string | undefined => (typeof x === 'string' && x.trim() !== '' ? x.trim() : undefined);
const flag = (x: unknown): boolean | undefined => (typeof x === 'boolean' ? x : undefined);

function parseSystemReady(body: unknown): SystemReady | undefined {
  if (!v.isPlainObject(body)) return undefined;
  const services = Array.isArray(body.requiredServices) ? body.requiredServices : [];
  const stoppedServices = services
    .filter((s): s is Record<string, unknown> => v.isPlainObject(s) && s.isRunning === false)
    .map((s, i) => text(s.name) ?? text(s.serviceName) ?? `service ${i + 1}`);
  return { isServerReady: body.isServerReady !== false, stoppedServices };
}

function parseConnection(body: unknown): ConnectionStatus | undefined {
  if (!v.isPlainObject(body) || typeof body.isControlled !== 'boolean') return undefined;
  return {
    isControlled: body.isControlled,
    controllerMachineName: text(body.controllerMachineName),
    controllerUserName: text(body.controllerUserName),
  };
}

function parseSensors(body: unknown): SensorStatus | undefined {
  if (!v.isPlainObject(body)) return undefined;
  return { isDoorClosed: flag(body.isDoorClosed), isEnclosurePresent: flag(body.isEnclosurePresent) };
}

function parseInfo(body: unknown): MachineInfo | undefined {
  if (!v.isPlainObject(body)) return undefined;
  return {
    instrumentName: text(body.instrumentName),
    serialNumber: text(body.serialNumber),
    isEnclosurePresent: flag(body.isEnclosurePresent),
  };
}

function parseVersions(body: unknown): SoftwareVersion[] | undefined {
  if (!Array.isArray(body)) return undefined;
  return body
    .filter(v.isPlainObject)
    .map((e) => ({ name: text(e.name) ?? '', version: text(e.version) ?? '' }))
    .filter((e) => e.name !== '' || e.version !== '')
    .slice(0, 50);
}

/**
 * The reasons a run must not be started now, in plain words; empty when nothing the instrument said stands in the
 * way. A read the instrument does not offer is no reason (older software).
 */
export function startBlockers(r: StartReadiness): string[] {
  const reasons: string[] = [];
  if (r.systemReady && (!r.systemReady.isServerReady || r.systemReady.stoppedServices.length > 0)) {
    const stopped = r.systemReady.stoppedServices;
    reasons.push(`the system is not ready${stopped.length > 0 ? ` (not running: ${stopped.join(', ')})` : ''}`);
  }
  if (r.connection?.isControlled) {
    const by = [r.connection.controllerMachineName, r.connection.controllerUserName && `user ${r.connection.controllerUserName}`]
      .filter(Boolean)
      .join(', ');
    reasons.push(`the instrument is controlled by another machine${by ? ` (${by})` : ''}`);
  }
  // a workstation without an enclosure has no door: its door sensor cannot read "closed" (present or unknown: it counts)
  if (r.sensors?.isDoorClosed === false && r.sensors.isEnclosurePresent !== false) reasons.push('the door is open');
  return reasons;
}

export class MachineApi {
  constructor(private readonly sendA: Sender) {}

  /** GET path; undefined when the instrument does not offer it (404). */
  private async read(path: string, operation: string): Promise<unknown> {
    try {
      const res = await this.sendA<unknown>({ method: 'GET', path, operation, idempotent: true, api: 'A' });
      return res.data;
    } catch (err) {
      if (err instanceof LhError && err.statusCode === 404) return undefined;
      throw err;
    }
  }

  async systemReady(): Promise<SystemReady | undefined> {
    return parseSystemReady(await this.read('/system-ready', 'system-ready'));
  }

  async connectionStatus(): Promise<ConnectionStatus | undefined> {
    return parseConnection(await this.read('/instruments/connection-status', 'connection-status'));
  }

  async sensorStatus(): Promise<SensorStatus | undefined> {
    return parseSensors(await this.read('/service-software-api/sensor-status', 'sensor-status'));
  }

  async info(): Promise<MachineInfo | undefined> {
    return parseInfo(await this.read('/instruments', 'instruments'));
  }

  async softwareVersions(): Promise<SoftwareVersion[] | undefined> {
    return parseVersions(await this.read('/software-versions', 'software-versions'));
  }

  /**
   * Name, serial number and software versions for a run record: never fails (a record is worth more than its
   * label); undefined when the instrument tells nothing.
   */
  async identity(): Promise<MachineIdentity | undefined> {
    const [info, softwareVersions] = await Promise.all([
      this.info().catch(() => undefined),
      this.softwareVersions().catch(() => undefined),
    ]);
    if (!info && !softwareVersions) return undefined;
    return { ...info, softwareVersions: softwareVersions ?? [] };
  }

  /** The three reads a start depends on, asked together. */
  async startReadiness(): Promise<StartReadiness> {
    const [systemReady, connection, sensors] = await Promise.all([
      this.systemReady(),
      this.connectionStatus(),
      this.sensorStatus(),
    ]);
    return { systemReady, connection, sensors };
  }
}
