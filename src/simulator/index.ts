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
export { Simulator, certPath, MAX_LOGGED_REQUESTS } from './simulator';
export { STEP_TYPES } from './types';
export type * from './types';
export type { EventChannel, UpgradeRecord } from './event-sockets';
export type { MessageBox, ClosedView, ViewResult } from './message-boxes';
export type { FirmwareError } from './error-pushes';
