/** The instrument simulator: public API. */
export { Simulator, certPath, MAX_LOGGED_REQUESTS } from './simulator';
export { STEP_TYPES } from './types';
export type * from './types';
