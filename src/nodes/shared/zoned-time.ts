/** Times as people read them in notifications and pages: local time of the Node-RED host with its time zone. */
import { utcUnlessZoned } from '../../client';

const pad = (n: number): string => String(n).padStart(2, '0');

/** `+01:00` for a `Date.getTimezoneOffset()` of -60. */
export function utcOffset(offsetMinutes: number): string {
  const east = -offsetMinutes;
  const sign = east >= 0 ? '+' : '-';
  const abs = Math.abs(east);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The IANA name of the host's time zone, when the runtime knows it. */
function zoneName(): string | undefined {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

/** `2026-01-31 12:00:00 UTC+01:00 (Europe/Berlin)`; the raw text when it is not a date. */
export function zonedTime(value: unknown): string {
  const d = instantOf(value);
  if (value === undefined || value === null || value === '' || Number.isNaN(d.getTime())) return String(value ?? '');
  const zone = zoneName();
  return `${localDateTime(d)} UTC${utcOffset(d.getTimezoneOffset())}${zone ? ` (${zone})` : ''}`;
}

/** `2026-01-31 12:00:00`: the date and time in the host's time zone. */
export function localDateTime(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A Date, ms or a date text as a Date; a text without a zone is the instrument's UTC (utcUnlessZoned), as everywhere. */
export function instantOf(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'number') return new Date(value);
  return new Date(utcUnlessZoned(String(value ?? '').trim()));
}
