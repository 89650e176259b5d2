/**
 * Sums a V8 CPU profile (a .cpuprofile, e.g. LH_BENCH_CPU_PROFILE of bench/fleet.ts) by what Node-RED's thread was
 * doing: `node -r ts-node/register/transpile-only bench/support/profile-summary.ts file.cpuprofile [fromMs toMs]`
 * (the window in ms from the profile's start; with LH_BENCH_TRACE_DUMP the bench's trace times convert through the
 * profile's `lhClock`). Each sample counts once, for the first stage of STAGES that any frame of its stack belongs
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

if (require.main === module) {
  const [file, from, to] = process.argv.slice(2);
  if (!file) {
    console.error('usage: profile-summary.ts file.cpuprofile [fromMs toMs]');
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  console.log(JSON.stringify(summariseProfile(profile, Number(from ?? 0), to === undefined ? Infinity : Number(to)), null, 1));
}
