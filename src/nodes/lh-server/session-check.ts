/**
 * lh-server's session health check: its interval from settings.js and the log of failing checks. The check itself
 * (what is sent, and when it may not be) is the client's checkSessionEvery.
 */
import { type LiquidHandlerClient, SESSION_CHECK_MAX_MS, SESSION_CHECK_MIN_MS } from '../../client';
import { logWarn } from '../shared/node-log';
import { type Node } from '../shared/node-red';

/** How often lh-server checks its session with check-authentication, unless settings.js says otherwise. */
export const SESSION_CHECK_MS = 5 * 60_000;

/**
 * The session check interval from settings.js `liquidHandler.sessionCheckSeconds`: undefined → every 5 minutes, 0 →
 * off (ms 0), else seconds within 0.1 s … 24 h (clamped, said). Anything but a number ≥ 0 keeps the default and says so.
 */
export function sessionCheckInterval(seconds: unknown): { ms: number; problem?: string } {
  if (seconds === undefined) return { ms: SESSION_CHECK_MS };
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    return {
      ms: SESSION_CHECK_MS,
      problem: `settings.js liquidHandler.sessionCheckSeconds must be a number of seconds >= 0 (0 switches the check off); checking every ${SESSION_CHECK_MS / 1000} s`,
    };
  }
  if (seconds === 0) return { ms: 0 };
  const ms = Math.round(seconds * 1000);
  const bounded = Math.min(SESSION_CHECK_MAX_MS, Math.max(SESSION_CHECK_MIN_MS, ms));
  return bounded === ms
    ? { ms }
    : {
        ms: bounded,
        problem: `settings.js liquidHandler.sessionCheckSeconds must be from 0.1 to 86400; checking every ${bounded / 1000} s`,
      };
}

/**
 * The session health check (check-authentication while logged in), every settings.js
 * `liquidHandler.sessionCheckSeconds` (default 300; 0 switches it off). A failure is logged once until a check holds
 * again: polls report an unreachable instrument, this says a session no longer holds. Returns the stop function.
 */
export function startSessionCheck(node: Node, client: LiquidHandlerClient, seconds: unknown): () => void {
  const { ms, problem } = sessionCheckInterval(seconds);
  if (problem) logWarn(node, problem);
  if (ms === 0) return () => undefined;
  let said = false;
  return client.checkSessionEvery(ms, (err) => {
    if (!err) {
      said = false;
      return;
    }
    if (said) return;
    said = true;
    logWarn(node, `session check (check-authentication) failed: ${err.message}`);
  });
}
