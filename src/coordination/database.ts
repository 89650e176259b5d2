/**
 * The Redis database a coordination URL names: its path, `/0` to `/65535` (none or `/` is database 0). Pure, so the
 * runtime check and the editor's field check are one rule. Anything else in the path (`/abc`, `/1x`, `/-1`,
 * `/99999`, `/1/2`) was read as database 0 before, silently: the replicas of a lab that meant database 2 would
 * coordinate in database 0, beside whatever else lives there.
 */
export const MAX_DATABASE = 65535;

export const DATABASE_RULE = `the path after the host is a database number from 0 to ${MAX_DATABASE} (redis://host:6379/2), or nothing for 0`;

/**
 * The database a Redis URL's path names, read from the text as typed (`redis://host:6379/2` → 2; no path or `/` → 0),
 * or undefined when the path is not a database number (a URL parser's normalising, `/./2` → `/2`, is not applied).
 */
export function databaseOfUrl(url: string): number | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/is.exec(url.trim());
  return m ? databaseOfPath(m[1] ?? '') : undefined;
}

function databaseOfPath(pathname: string): number | undefined {
  if (pathname === '' || pathname === '/') return 0;
  const m = /^\/(\d{1,5})$/.exec(pathname);
  if (!m) return undefined;
  const db = Number(m[1]);
  return db <= MAX_DATABASE ? db : undefined;
}
