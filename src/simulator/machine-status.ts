/**
 * What the workstation says about itself (A, beyond interfaces.md; see observed-instrument.md): whether its services
 * are ready, who controls it, whether the door is closed, its name, serial number and software versions. A real
 * instrument of an older software may not serve some of these: `offered: false` answers 404 for all of them.
 */
import { isObject } from './json-fields';
import { problem } from './problem';
import type { Reply, Route } from './router';

const V1 = '/api/v1';

export interface MachineState {
  /** false: the routes answer 404 (an instrument that does not offer them) */
  offered: boolean;
  instrumentName: string;
  serialNumber: string;
  isEnclosurePresent: boolean;
  isDoorClosed: boolean;
  isServerReady: boolean;
  /** services reported as not running */
  stoppedServices: string[];
  isControlled: boolean;
  controllerMachineName: string;
  controllerUserName: string;
  softwareVersions: { name: string; version: string }[];
}

const SERVICES = ['Instrument', 'Scheduler'];

export function initialMachineState(): MachineState {
  return {
    offered: true,
    instrumentName: 'Simulated workstation',
    serialNumber: 'SIM-0001',
    isEnclosurePresent: true,
    isDoorClosed: true,
    isServerReady: true,
    stoppedServices: [],
    isControlled: false,
    controllerMachineName: '',
    controllerUserName: '',
    softwareVersions: [
      { name: 'Preparation service', version: '3.4.0' },
      { name: 'Firmware', version: '2.1.7' },
    ],
  };
}

const BOOLEAN_FIELDS = ['offered', 'isEnclosurePresent', 'isDoorClosed', 'isServerReady', 'isControlled'] as const;
const TEXT_FIELDS = ['instrumentName', 'serialNumber', 'controllerMachineName', 'controllerUserName'] as const;

/** PUT /sim/machine: changes the fields given; refuses a field of the wrong type (the state stays as it was). */
export function updateMachineState(state: MachineState, body: unknown): MachineState {
  if (!isObject(body)) throw new RangeError('the machine state must be a JSON object');
  const next: MachineState = {
    ...state,
    stoppedServices: [...state.stoppedServices],
    softwareVersions: [...state.softwareVersions],
  };
  for (const key of BOOLEAN_FIELDS) {
    if (body[key] === undefined) continue;
    if (typeof body[key] !== 'boolean') throw new RangeError(`${key} must be a boolean`);
    next[key] = body[key];
  }
  for (const key of TEXT_FIELDS) {
    if (body[key] === undefined) continue;
    if (typeof body[key] !== 'string') throw new RangeError(`${key} must be a string`);
    next[key] = body[key];
  }
  if (body.stoppedServices !== undefined) {
    const list = body.stoppedServices;
    if (!Array.isArray(list) || !list.every((s): s is string => typeof s === 'string')) {
      throw new RangeError('stoppedServices must be a list of service names');
    }
    next.stoppedServices = list;
  }
  return next;
}

export function machineRoutes(state: () => MachineState): Route[] {
  const ok = (body: unknown): Reply => ({ status: 200, body });
  const offered = (answer: (s: MachineState) => unknown) => (): Reply => {
    const s = state();
    return s.offered ? ok(answer(s)) : { status: 404, body: problem(404, 'Not Found') };
  };
  return [
    {
      method: 'GET',
      pattern: `${V1}/system-ready`,
      body: 'none',
      auth: true,
      handle: offered((s) => ({
        isServerReady: s.isServerReady && s.stoppedServices.length === 0,
        requiredServices: SERVICES.map((name) => ({ name, isRunning: !s.stoppedServices.includes(name) })),
      })),
    },
    {
      method: 'GET',
      pattern: `${V1}/instruments/connection-status`,
      body: 'none',
      auth: true,
      handle: offered((s) => ({
        isControlled: s.isControlled,
        controllerMachineName: s.isControlled ? s.controllerMachineName : '',
        controllerUserName: s.isControlled ? s.controllerUserName : '',
      })),
    },
    {
      method: 'GET',
      pattern: `${V1}/instruments`,
      body: 'none',
      auth: true,
      handle: offered((s) => ({
        instrumentName: s.instrumentName,
        serialNumber: s.serialNumber,
        endpoint: 'simulator',
        isEnclosurePresent: s.isEnclosurePresent,
      })),
    },
    {
      method: 'GET',
      pattern: `${V1}/service-software-api/sensor-status`,
      body: 'none',
      auth: true,
      handle: offered((s) => ({ isDoorClosed: s.isDoorClosed, isEnclosurePresent: s.isEnclosurePresent })),
    },
    {
      method: 'GET',
      pattern: `${V1}/software-versions`,
      body: 'none',
      auth: true,
      handle: offered((s) => s.softwareVersions.map((v) => ({ ...v }))),
    },
  ];
}
