/**
 * One instrument, however its URLs are spelled. Replicas whose lh-server nodes name the same instrument differently
 * (`http://localhost:8080/` on one, `HTTP://127.0.0.1:8080` on another) must share one lease, one shared memory and
 * one audit stream, or the instrument is watched twice (or by one spelling only). Pure: no DNS, no I/O.
 *
 * The identity of an instrument is its pair of URLs (interface A `baseUrl`, interface B `instrumentUrl`, as the
 * lh-server node's `instrumentKey` `<A>|<B>` holds them), each normalised:
 * - scheme and host in lower case (they are case-insensitive), the path kept as written (paths are not);
 * - a loopback host (`localhost`, any `127.x.y.z`, `[::1]`, `localhost.`) is `127.0.0.1`: every replica that names it
 *   runs on the instrument's own machine, where they are one host;
 * - the scheme's default port dropped (`:80` for http, `:443` for https), trailing slashes dropped, no user info;
 * - a URL that does not parse is kept as written (trimmed, trailing slashes dropped): it names no instrument anyway.
 * Other names of one host (a DNS name and its address, two DNS names) stay two identities: resolving them would make
 * the identity depend on DNS at the moment a replica starts. Already-normal keys (`http://127.0.0.1:8080|`) are
 * their own identity, so the Redis keys of an instrument spelled that way are those of earlier versions.
 */

const LOOPBACK = '127.0.0.1';

function isLoopback(host: string): boolean {
  const h = host.replace(/\.$/, '');
  return h === 'localhost' || h === '[::1]' || h === '[0:0:0:0:0:0:0:1]' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** One URL of an instrument, normalised (see the module comment). */
export function normalInstrumentUrl(raw: string): string {
  const text = raw.trim();
  if (text === '') return '';
  // a text that is a URL only once its end is bare ("http://lab /") is that URL, as its identity reads again
  const u = httpUrl(text) ?? httpUrl(bare(text));
  if (u === undefined) return bare(text);
  const host = isLoopback(u.hostname) ? LOOPBACK : u.hostname;
  const port = u.port === '' ? '' : `:${u.port}`; // URL already drops the scheme's default port
  const path = u.pathname.replace(/\/+$/, '');
  return `${u.protocol}//${host}${port}${path}${u.search}`;
}

function httpUrl(text: string): URL | undefined {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Text that is no http(s) URL, without the slashes and spaces it ends with (both at once: "a /" and "a" are one
 * identity, and the identity of an identity is itself).
 */
function bare(text: string): string {
  return text.replace(/[\s/]+$/, '');
}

/** The identity of an instrument from an lh-server `instrumentKey` (`<baseUrl>|<instrumentUrl>`). */
export function instrumentIdentity(instrumentKey: string): string {
  const bar = instrumentKey.indexOf('|');
  if (bar < 0) return normalInstrumentUrl(instrumentKey);
  return `${normalInstrumentUrl(instrumentKey.slice(0, bar))}|${normalInstrumentUrl(instrumentKey.slice(bar + 1))}`;
}
