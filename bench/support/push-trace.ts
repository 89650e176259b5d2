/**
 * Where a pushed error's detection waits, measured from outside the package (nothing in src/ knows about it, no cost
 * in production): the benchmark wraps two methods of the built client that Node-RED loads (the same modules, from
 * require's cache) before it deploys:
 *
 * - InstrumentEvents.subscribe: each frame of instincterrors as the socket hands it to the node (after parsing),
 *   and when the node's listener returned (its decision: firmware error or not, poll requested);
 * - Transport.request: each request's start and end, by instrument and operation, with the answer of every
 *   check-for-pending-errors (the ids it listed) and every login or renewal.
 *
 * For an error injected at `inject` and raised at `raised` (the msg at the flow's sink), the trace gives: the frame's
 * arrival, the first poll whose answer lists the error, whether that poll started before the frame (a poll already
 * under way) or after (waiting for it: a poll in flight, timers, the event loop), its round trip, and the rest (the
 * node's own work and Node-RED's delivery of the msg).
 */
import path from 'path';

import { busiestWindow } from '../../test/support/busiest-window';
import { REPO_ROOT } from './node-red';
import { percentile, preciseNow, round } from './report';

interface FrameRecord {
  baseUrl: string;
  at: number;
  decidedAt: number;
  event: { code: string; data: unknown };
}

interface RequestRecord {
  baseUrl: string;
  operation: string;
  start: number;
  end: number;
  ok: boolean;
  data?: unknown;
}

/** One poll's wait for a permit of the process's cap (src/nodes/shared/poll-permits.ts). */
interface PermitRecord {
  asked: number;
  granted: number;
  /** polls already waiting when this one asked */
  queued: number;
}

interface Injected {
  key: string;
  time: number;
}

interface Raised {
  key: string;
  time: number;
}

/** The segments of one detection, ms. */
export interface Breakdown {
  key: string;
  total: number;
  /** injection in the simulator → frame handed to the node (the simulator's push, the socket, Node-RED's loop) */
  pushTransit: number;
  /** the node's decision on the frame (its listener) */
  decision: number;
  /** frame → start of the poll that listed it (0 when that poll was already under way) */
  waitForPoll: number;
  /** start (or the frame, when the poll was under way already) → answer of that poll (the instrument's answer time, plus Node-RED's loop) */
  pollRoundTrip: number;
  /** answer → msg at the sink (the node's work, Node-RED's delivery) */
  afterAnswer: number;
  /** of afterAnswer: the deck photo's request of that instrument under way meanwhile (0 without one) */
  photo: number;
  /** the listing poll started before the frame arrived (a scheduled poll, or one still under way) */
  pollStartedBeforeFrame: boolean;
  /** a poll of that instrument was in flight when the frame arrived (the push-poll had to wait for it) */
  pollInFlightAtFrame: boolean;
}

type Method = (...args: unknown[]) => unknown;

export class PushTrace {
  private frames: FrameRecord[] = [];
  private requests: RequestRecord[] = [];
  private permits: PermitRecord[] = [];
  private recording = false;
  private readonly restore: (() => void)[] = [];

  /** Wraps the client's methods (call before Node-RED loads the flow; undo with `uninstall`). */
  install(): void {
    const eventsModule = require(path.join(REPO_ROOT, 'nodes', 'client', 'events.js')) as {
      InstrumentEvents: { prototype: Record<string, Method> };
    };
    const transportModule = require(path.join(REPO_ROOT, 'nodes', 'client', 'transport.js')) as {
      Transport: { prototype: Record<string, Method> };
    };
    const permitsModule = require(path.join(REPO_ROOT, 'nodes', 'nodes', 'shared', 'poll-permits.js')) as {
      pollPermits: { acquire: () => Promise<unknown>; waiting: number };
    };
    const permits = permitsModule.pollPermits;
    const acquire = permits.acquire;
    const onPermit = (r: PermitRecord): void => {
      if (this.recording) this.permits.push(r);
    };
    permits.acquire = function (this: typeof permits) {
      const asked = preciseNow();
      const queued = permits.waiting;
      return acquire.call(this).then((release) => {
        onPermit({ asked, granted: preciseNow(), queued });
        return release;
      });
    };
    this.restore.push(() => (permits.acquire = acquire));
    const onFrame = (f: FrameRecord): void => {
      if (this.recording) this.frames.push(f);
    };
    const onRequest = (r: RequestRecord): void => {
      if (this.recording) this.requests.push(r);
    };
    const events = eventsModule.InstrumentEvents.prototype;
    const subscribe = events.subscribe;
    events.subscribe = function (this: { baseUrl: string }, ...args: unknown[]) {
      const [channel, listener] = args as [string, (event: { code: string; data: unknown }) => void];
      if (channel !== 'errors') return subscribe.apply(this, args);
      const baseUrl = this.baseUrl;
      const wrapped = (event: { code: string; data: unknown }): void => {
        const at = preciseNow();
        try {
          listener(event);
        } finally {
          onFrame({ baseUrl, at, decidedAt: preciseNow(), event });
        }
      };
      return subscribe.call(this, channel, wrapped);
    };
    this.restore.push(() => (events.subscribe = subscribe));

    const transport = transportModule.Transport.prototype;
    const request = transport.request;
    transport.request = async function (this: { baseUrl: string }, ...args: unknown[]) {
      const spec = args[0] as { operation: string };
      const start = preciseNow();
      let ok = false;
      let data: unknown;
      try {
        const res = (await request.apply(this, args)) as { data: unknown };
        ok = true;
        data = res.data;
        return res;
      } finally {
        const keep = spec.operation === 'check-for-pending-errors' ? data : undefined;
        onRequest({ baseUrl: this.baseUrl, operation: spec.operation, start, end: preciseNow(), ok, data: keep });
      }
    };
    this.restore.push(() => (transport.request = request));
  }

  uninstall(): void {
    for (const undo of this.restore.splice(0)) undo();
  }

  start(): void {
    this.frames = [];
    this.requests = [];
    this.permits = [];
    this.recording = true;
  }

  stop(): void {
    this.recording = false;
  }

  /** Everything recorded, for a closer look (LH_BENCH_TRACE_DUMP=file writes it). */
  dump(): { frames: Omit<FrameRecord, 'event'>[]; requests: Omit<RequestRecord, 'data'>[] } {
    return {
      frames: this.frames.map(({ event: _event, ...f }) => f),
      requests: this.requests.map(({ data: _data, ...r }) => r),
    };
  }

  /** Requests by operation: how many, and their round trip (p50 / p99 / max, ms). */
  requestSummary(): Record<string, { count: number; failed: number; p50: number; p99: number; max: number }> {
    const byOp = new Map<string, RequestRecord[]>();
    for (const r of this.requests) byOp.set(r.operation, [...(byOp.get(r.operation) ?? []), r]);
    const out: Record<string, { count: number; failed: number; p50: number; p99: number; max: number }> = {};
    for (const [op, list] of byOp) {
      const times = list.map((r) => r.end - r.start);
      out[op] = {
        count: list.length,
        failed: list.filter((r) => !r.ok).length,
        p50: round(percentile(times, 50), 1),
        p99: round(percentile(times, 99), 1),
        max: round(Math.max(...times), 1),
      };
    }
    return out;
  }

  /** Polls' waits for a permit (ms) and the longest queue a poll found. */
  permitSummary(): { count: number; waited: number; p50: number; p99: number; max: number; longestQueue: number } {
    const waits = this.permits.map((p) => p.granted - p.asked);
    return {
      count: waits.length,
      waited: waits.filter((w) => w >= 1).length,
      p50: round(percentile(waits, 50), 1),
      p99: round(percentile(waits, 99), 1),
      max: round(Math.max(0, ...waits), 1),
      longestQueue: Math.max(0, ...this.permits.map((p) => p.queued)),
    };
  }

  /** The most polls (check-for-pending-errors) that started in any 100 ms, over the whole fleet: a herd shows here. */
  busiestPollWindow(windowMs = 100): number {
    return busiestWindow(
      this.requests.filter((r) => r.operation === 'check-for-pending-errors').map((r) => r.start),
      windowMs,
    );
  }

  /** The segments of every traced detection (injected A errors raised once, with their frame seen). */
  breakdown(injected: Injected[], raised: Raised[]): Breakdown[] {
    const firstRaised = new Map<string, number>();
    for (const r of raised) if (!firstRaised.has(r.key)) firstRaised.set(r.key, r.time);
    const frameOf = new Map<string, FrameRecord>();
    for (const f of this.frames) {
      if (f.event.code !== 'runtimeerror') continue;
      const id = idOf(f.event.data);
      if (id !== undefined && !frameOf.has(id)) frameOf.set(id, f);
    }
    const pollsOf = new Map<string, RequestRecord[]>();
    const photosOf = new Map<string, RequestRecord[]>();
    for (const r of this.requests) {
      const into = r.operation === 'check-for-pending-errors' ? pollsOf : r.operation === 'snapshot' ? photosOf : undefined;
      if (into) into.set(r.baseUrl, [...(into.get(r.baseUrl) ?? []), r]);
    }
    const out: Breakdown[] = [];
    for (const inj of injected) {
      const raisedAt = firstRaised.get(inj.key);
      const frame = frameOf.get(inj.key);
      if (raisedAt === undefined || !frame) continue;
      const polls = pollsOf.get(frame.baseUrl) ?? [];
      const listing = polls.filter((p) => p.ok && p.end <= raisedAt && lists(p.data, inj.key)).sort((a, b) => a.end - b.end)[0];
      if (!listing) continue;
      const startedBefore = listing.start < frame.at;
      const photo = (photosOf.get(frame.baseUrl) ?? [])
        .filter((p) => p.end > listing.end && p.start < raisedAt)
        .reduce((ms, p) => ms + Math.min(p.end, raisedAt) - Math.max(p.start, listing.end), 0);
      out.push({
        key: inj.key,
        total: raisedAt - inj.time,
        pushTransit: frame.at - inj.time,
        decision: frame.decidedAt - frame.at,
        waitForPoll: startedBefore ? 0 : listing.start - frame.at,
        pollRoundTrip: Math.max(0, listing.end - Math.max(listing.start, frame.at)),
        afterAnswer: raisedAt - listing.end,
        photo,
        pollStartedBeforeFrame: startedBefore,
        pollInFlightAtFrame: polls.some((p) => p.start < frame.at && p.end > frame.at),
      });
    }
    return out;
  }
}

function idOf(data: unknown): string | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const id = (data as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}

function lists(data: unknown, key: string): boolean {
  return Array.isArray(data) && data.some((e) => idOf(e) === key);
}

/** p50 / p99 / max of each segment, over all detections and over the slowest 1 %. */
export function summarise(rows: Breakdown[]): Record<string, unknown> {
  const segments = ['total', 'pushTransit', 'decision', 'waitForPoll', 'pollRoundTrip', 'afterAnswer', 'photo'] as const;
  const stats = (list: Breakdown[]): Record<string, { p50: number; p99: number; max: number; mean: number }> =>
    Object.fromEntries(
      segments.map((s) => {
        const v = list.map((r) => r[s]);
        return [
          s,
          {
            p50: round(percentile(v, 50), 1),
            p99: round(percentile(v, 99), 1),
            max: round(Math.max(...v), 1),
            mean: round(v.reduce((a, b) => a + b, 0) / Math.max(1, v.length), 1),
          },
        ];
      }),
    );
  const sorted = [...rows].sort((a, b) => b.total - a.total);
  const slowest = sorted.slice(0, Math.max(1, Math.ceil(rows.length / 100)));
  return {
    traced: rows.length,
    all: stats(rows),
    slowest1Percent: stats(slowest),
    listedByAPollAlreadyUnderWay: rows.filter((r) => r.pollStartedBeforeFrame).length,
    pollInFlightAtFrame: rows.filter((r) => r.pollInFlightAtFrame).length,
  };
}
