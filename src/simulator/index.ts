/**
 * The instrument simulator: interface A (preparation service, HTTP), interface B (instrument control,
 * HTTPS with the bundled throwaway CA), fault injection and the /sim control API. Used by the tests, by
 * `npm start` and shipped as the `lh-simulator` command.
 *
 *   const sim = new Simulator({ prefix: '/NimbusLite' });
 *   await sim.start();              // sim.baseUrl, sim.instrumentUrl, sim.controlUrl, sim.ca
 *   sim.injectPendingError({ title: 'Clot detected' });
 *   await sim.stop();
 */
export type { FirmwareError } from './error-pushes';
export type { EventChannel, UpgradeRecord } from './event-sockets';
export type { ClosedView, MessageBox, ViewResult } from './message-boxes';
export { certPath, MAX_LOGGED_REQUESTS, Simulator } from './simulator';
export type * from './types';
export { STEP_TYPES } from './types';
