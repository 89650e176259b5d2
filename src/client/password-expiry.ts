/**
 * Password expiry as the login result tells it (passwordExpiresInDays, notifyPasswordExpiresSoon): a Node-RED left
 * running for months must hear about it before the instrument refuses the password. Pure: no timers, no I/O.
 */
import type { AuthResult } from './types';

/** Days before expiry from which a warning is given when the instrument does not say itself (its default policy). */
export const DEFAULT_WARN_DAYS = 14;
/** A warning is repeated at most this often. */
export const WARN_EVERY_MS = 24 * 60 * 60 * 1000;

export interface PasswordExpiry {
  /** whole days left, as the instrument says (0 or less: expires today or has expired) */
  daysLeft: number;
  /** when it expires, counted from the login that told it (ms since epoch) */
  expiresAt: number;
  /** whether a warning is due by the instrument's word (notifyPasswordExpiresSoon) or by the days left */
  warn: boolean;
}

/** Given by the session at most once a day while the password is about to expire (event 'password-warning'). */
export interface PasswordWarning extends PasswordExpiry {
  user: string;
  /** "the password of user "ana" expires in 3 days" */
  text: string;
}

/** What a login result says of the password's expiry; undefined when it says nothing usable (or no expiry). */
export function passwordExpiryOf(result: AuthResult, now: number, warnDays = DEFAULT_WARN_DAYS): PasswordExpiry | undefined {
  const days = result.passwordExpiresInDays;
  if (typeof days !== 'number' || !Number.isFinite(days)) return undefined;
  const daysLeft = Math.floor(days);
  // 0 is what an instrument reports when its passwords do not expire (policy passwordExpires 0): "expires today"
  // only when the instrument itself says a warning is due
  if (daysLeft === 0 && result.notifyPasswordExpiresSoon !== true) return undefined;
  return {
    daysLeft,
    expiresAt: now + daysLeft * 24 * 60 * 60 * 1000,
    warn: result.notifyPasswordExpiresSoon === true || daysLeft <= warnDays,
  };
}

/**
 * Whether to warn now: a warning is due and none was given in the last day. `lastWarnedAt` as `warnedAt` gives it: a
 * last warning dated after now (the clock set back since: an NTP step, a resumed VM) counts as given now, so the
 * next comes a day later, never after the step's length, and a clock jittering back does not warn at every login.
 */
export function warnNow(expiry: PasswordExpiry | undefined, lastWarnedAt: number | undefined, now: number): boolean {
  if (!expiry?.warn) return false;
  return lastWarnedAt === undefined || now - lastWarnedAt >= WARN_EVERY_MS;
}

/** When the last warning counts as given, as read at `now`: never after now (keep it so for the next reading). */
export function warnedAt(lastWarnedAt: number | undefined, now: number): number | undefined {
  return lastWarnedAt === undefined ? undefined : Math.min(lastWarnedAt, now);
}

/** "the password of user "ana" expires in 3 days" */
export function describeExpiry(expiry: PasswordExpiry, username: string): string {
  const who = `the password of user "${username}"`;
  if (expiry.daysLeft < 0) return `${who} has expired`;
  if (expiry.daysLeft === 0) return `${who} expires today`;
  return `${who} expires in ${expiry.daysLeft} day${expiry.daysLeft === 1 ? '' : 's'}`;
}
