/**
 * The session's password-expiry warning (at most once a day, from the login result) as lh-server logs it and as
 * lh-error-poll sends it on its connection output.
 */
import { type PasswordWarning, warnedAt, warnNow } from '../../client';
import { homeOf, slot } from '../../instrument';
import type { InstrumentInfo } from './error-records';

export type PasswordExpiryMsg = {
  topic: string;
  event: 'password-expiry';
  instrument: InstrumentInfo;
  payload: { state: 'password-expiry'; instrument: string; user: string; daysLeft: number; expiresAt: string };
};

export function passwordExpiryMessage(warning: PasswordWarning, instrument: InstrumentInfo): PasswordExpiryMsg {
  return {
    topic: `${instrument.name}: ${warning.text}; change it on the instrument, then in the lh-server node`,
    event: 'password-expiry',
    instrument,
    payload: {
      state: 'password-expiry',
      instrument: instrument.name,
      user: warning.user,
      daysLeft: warning.daysLeft,
      expiresAt: new Date(warning.expiresAt).toISOString(),
    },
  };
}

/** What gives the warnings: a LiquidHandlerClient (its session's 'password-warning' events). */
export interface WarningSource {
  baseUrl: string;
  on(event: 'password-warning', fn: (warning: PasswordWarning) => void): unknown;
  off(event: 'password-warning', fn: (warning: PasswordWarning) => void): unknown;
}

/**
 * When each listener last passed a warning on, per user, in the instrument's home, so that it outlives a redeploy
 * (a redeploy makes new clients, whose sessions warn again at their first login). Bounded by the listeners deployed.
 */
const LAST_WARNED = slot('password-warnings', () => new Map<string, number>());
const MAX_REMEMBERED = 1000;

/**
 * Calls `fn` for the warnings of this client until the returned function is called: at most once a day per
 * instrument, user and `listener` (the lh-server node's log, each poll node's output), redeploys included.
 */
export function onPasswordWarning(
  client: WarningSource,
  fn: (warning: PasswordWarning) => void,
  listener = 'server',
  now: () => number = Date.now,
): () => void {
  const handler = (warning: PasswordWarning): void => {
    const lastWarned = homeOf(client.baseUrl).slot(LAST_WARNED);
    const key = `${warning.user}|${listener}`;
    const t = now();
    const last = warnedAt(lastWarned.get(key), t);
    if (last !== undefined && last !== lastWarned.get(key)) lastWarned.set(key, last); // the clock went back: from now
    if (!warnNow(warning, last, t)) return;
    lastWarned.delete(key);
    lastWarned.set(key, t);
    if (lastWarned.size > MAX_REMEMBERED) lastWarned.delete(lastWarned.keys().next().value as string);
    fn(warning);
  };
  client.on('password-warning', handler);
  return () => client.off('password-warning', handler);
}
