/**
 * The homes of the instruments this Node-RED knows, one per instrument (the only module-level map of per-instrument
 * state). An lh-server node attaches to its instrument's home and detaches on close; the last to detach closes it
 * (home.ts `close()`), and a later attach (a redeploy) finds the same memory again.
 *
 * An instrument is known by its interface A URL as the answer ledger and the start claims have always keyed it
 * (`urlKey`: every spelling of it, loopback aliases, a default port, letter case, trailing slashes, is one): an
 * lh-server node with interface B and one without, pointing at the same A, share one home.
 */
import { type AuditRedis, redisChainsReleased } from '../audit';
import { urlKey } from '../client';
import { InstrumentHome } from './home';

const homes = new Map<string, InstrumentHome>();

/** An lh-server node's hold on its instrument's home. */
export interface HomeAttachment {
  readonly home: InstrumentHome;
  /** Lets go (once; later calls do nothing): the last attachment to let go closes the home. */
  detach(): Promise<void>;
}

/** The key of an instrument's home: its interface A URL (urlKey) from an lh-server `instrumentKey` or a URL. */
export function homeKey(instrumentKey: string): string {
  const bar = instrumentKey.indexOf('|');
  return urlKey(bar < 0 ? instrumentKey : instrumentKey.slice(0, bar));
}

/**
 * The home of the instrument `instrumentKey` names (an lh-server's `baseUrl|instrumentUrl`, or interface A's URL),
 * made on first use.
 */
export function homeOf(instrumentKey: string): InstrumentHome {
  const identity = homeKey(instrumentKey);
  let home = homes.get(identity);
  if (!home) homes.set(identity, (home = new InstrumentHome(identity)));
  return home;
}

/** The home of that instrument if one was made (reads that must not make one). */
export function findHome(instrumentKey: string): InstrumentHome | undefined {
  return homes.get(homeKey(instrumentKey));
}

/** An lh-server node of the instrument starts: it holds the home until it detaches. */
export function attachHome(instrumentKey: string): HomeAttachment {
  const home = homeOf(instrumentKey);
  home.hold();
  let detached = false;
  return {
    home,
    async detach() {
      if (detached) return;
      detached = true;
      if (home.letGo()) await home.close();
    },
  };
}

/** Forgets every home: what a restart of Node-RED does to this process's memory (tests). */
export function resetHomes(): void {
  homes.clear();
}

/**
 * Resolves once no audit chain of any instrument uses the Redis connection any more (every lh-server node released
 * its trail and its last records were written): the lh-coordination node waits for it before it disconnects.
 */
export function redisAuditReleased(redis: AuditRedis): Promise<void> {
  return redisChainsReleased(redis, () => [...homes.values()].map((home) => home.audit));
}
