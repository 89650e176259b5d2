/**
 * Sums a V8 CPU profile (a .cpuprofile, e.g. LH_BENCH_CPU_PROFILE of bench/fleet.ts) by what Node-RED's thread was
 * doing: `node -r ts-node/register/transpile-only bench/support/profile-summary.ts file.cpuprofile [fromMs toMs]`
 * (a window in ms from the profile's start), or `… file.cpuprofile trace.json` with the trace of the same run
 * (LH_BENCH_TRACE_DUMP): the raise burst of LH_BENCH_PUSH_BURST=1 (its first frame to the first resolution frame,
 * through the profile's `lhClock`) and the thread's time per raised error. Each sample counts once, for the first stage of STAGES that any frame of its stack belongs
 * to (its async caller is not on the stack: a request's socket write after a tick counts as HTTP, not as the poll),
 * and by the owner of its innermost frame (this package, Node-RED, axios, Node's own JavaScript, native, GC, idle).
 * The sampling profiler counts wall time while the thread runs JavaScript or native code: on a loaded machine that
 * includes time the thread waited for a core.
 */
import fs from 'fs';
import path from 'path';

import { REPO_ROOT } from './node-red';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
  /** bench/fleet.ts: the trace's clock (preciseNow, ms) and the monotonic clock (µs) when the profile started */
  lhClock?: { preciseNowMs: number; monotonicUs: number };
}

const OURS = path.join(REPO_ROOT, 'nodes') + path.sep;

/** What the thread was doing, by the code on the stack, first match wins (file or function names of the built code). */
export const STAGES: [string, RegExp][] = [
  ['save of the memory file (fs through the thread pool)', /nodes\/lh-error-poll\/seen-file\.js/],
  ['frame: socket read, parse, decision', /client\/(events|event-frames)\.js|\/ws\/lib\/|onFrame/],
  [
    'HTTP requests: polls and photos (transport, axios, Node http, socket writes)',
    /client\/(session|transport|http-client)\.js|axios|node:_http_|node:net|stream_base_commons|node:internal\/streams/,
  ],
  ['deck photo (attach, msg fields)', /nodes\/deck\/snapshot\.js|client\/deck\.js/],
  ['lab events and metrics', /shared\/lab-publish\.js|observe\/|prom-client/],
  ['msg out: build, Node-RED delivery', /error-messages\.js|\bemit@.*error-watch|@node-red\/runtime|@node-red\/nodes/],
  [
    'poll: apply the answer, identities, status',
    /error-watch\.js|poll-decisions\.js|push-decisions\.js|seen-errors\.js|error-identity\.js|shared\/status\.js/,
  ],
  ['poll loop, permits, timers', /shared\/(poll-loop|poll-permits|live-polls|poll-schedule)\.js|node:internal\/timers/],
];

function frameText(f: CallFrame): string {
  return `${f.functionName}@${f.url.replace(/^file:\/\//, '')}`;
}

/** Who owns a frame: 'package' (this package's built code), 'node-red', 'dep:<name>', 'node' (its JS), or V8's own. */
export function ownerOf(frame: CallFrame): string {
  const url = frame.url.replace(/^file:\/\//, '');
  if (url === '') {
    if (['(garbage collector)', '(idle)', '(program)', '(root)'].includes(frame.functionName)) return frame.functionName;
    return 'native';
  }
  if (url.startsWith('node:')) return 'node';
  if (url.startsWith(OURS)) return 'package';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url.slice(url.lastIndexOf('node_modules/')));
  if (m) return m[1].startsWith('@node-red/') || m[1] === 'node-red' ? 'node-red' : `dep:${m[1]}`;
  return 'other';
}

/** Milliseconds of the thread per stage and per owner, in [fromMs, toMs) of the profile. */
export function summariseProfile(profile: Profile, fromMs = 0, toMs = Infinity): Record<string, unknown> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stage = new Map<string, number>();
  const owner = new Map<string, number>();
  let at = 0;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const us = profile.timeDeltas[i + 1] ?? 0; // a sample lasts until the next one
    if (at / 1000 < fromMs || at / 1000 >= toMs) continue;
    const leaf = byId.get(profile.samples[i]);
    if (!leaf) continue;
    total += us;
    const o = ownerOf(leaf.callFrame);
    owner.set(o, (owner.get(o) ?? 0) + us);
    let name = ['(idle)', '(garbage collector)', '(program)'].includes(o) ? o : 'other';
    if (name === 'other') {
      const stack: string[] = [];
      for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id))
        stack.push(frameText(byId.get(id)!.callFrame));
      name = STAGES.find(([, re]) => stack.some((f) => re.test(f)))?.[0] ?? 'other (Node, bench)';
    }
    stage.set(name, (stage.get(name) ?? 0) + us);
  }
  const ms = (us: number): number => Math.round(us / 100) / 10;
  const sorted = (m: Map<string, number>): Record<string, number> =>
    Object.fromEntries([...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, ms(v)]));
  return { windowMs: ms(total), byStageMs: sorted(stage), byInnermostOwnerMs: sorted(owner) };
}

/** A trace time (preciseNow, ms) as ms from the profile's start, when the profile carries the bench's clock. */
export function profileOffsetMs(profile: Profile, preciseNowMs: number): number | undefined {
  if (!profile.lhClock) return undefined;
  return preciseNowMs - profile.lhClock.preciseNowMs + (profile.lhClock.monotonicUs - profile.startTime) / 1000;
}

/** The trace the bench dumps (LH_BENCH_TRACE_DUMP): frames as they reached the node, requests with their operation. */
interface TraceDump {
  frames: { at: number }[];
  requests: { start: number; operation: string }[];
}

/**
 * The raise burst of LH_BENCH_PUSH_BURST=1 in a trace: from the first frame to the first frame after a gap of 2 s (the
 * resolutions, 6 s later), with the polls and photos started in it; undefined without frames.
 */
export function raiseBurst(
  trace: TraceDump,
): { from: number; to: number; frames: number; polls: number; photos: number } | undefined {
  const at = trace.frames.map((f) => f.at).sort((a, b) => a - b);
  if (at.length === 0) return undefined;
  let i = 1;
  while (i < at.length && at[i] - at[i - 1] < 2000) i++;
  const from = at[0];
  const to = i < at.length ? at[i] : Infinity;
  const started = (op: string): number =>
    trace.requests.filter((r) => r.operation === op && r.start >= from && r.start < to).length;
  return { from, to, frames: i, polls: started('check-for-pending-errors'), photos: started('snapshot') };
}

if (require.main === module) {
  const [file, from, to] = process.argv.slice(2);
  if (!file) {
    console.error('usage: profile-summary.ts file.cpuprofile [fromMs toMs | trace-dump.json]');
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  if (from !== undefined && Number.isNaN(Number(from))) {
    // a trace dump: the raise burst, and the thread's time per raised error
    const burst = raiseBurst(JSON.parse(fs.readFileSync(from, 'utf8')) as TraceDump);
    const a = burst && profileOffsetMs(profile, burst.from);
    const b = burst && profileOffsetMs(profile, burst.to);
    if (!burst || a === undefined || b === undefined)
      throw new Error('no raise burst in the trace, or a profile without lhClock');
    const summary = summariseProfile(profile, a, b) as { windowMs: number; byStageMs: Record<string, number> };
    const busy = summary.windowMs - (summary.byStageMs['(idle)'] ?? 0);
    console.log(
      JSON.stringify(
        {
          raiseBurst: { ...burst, from: undefined, to: undefined, ms: Math.round(burst.to - burst.from) },
          busyMsPerError: Math.round((busy / burst.frames) * 100) / 100,
          requestsPerError: Math.round(((burst.polls + burst.photos) / burst.frames) * 100) / 100,
          ...summary,
        },
        null,
        1,
      ),
    );
  } else {
    console.log(JSON.stringify(summariseProfile(profile, Number(from ?? 0), to === undefined ? Infinity : Number(to)), null, 1));
  }
}
