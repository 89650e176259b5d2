/**
 * Sums a V8 CPU profile (a .cpuprofile, e.g. LH_BENCH_CPU_PROFILE of bench/fleet.ts) by whose code was running:
 * `node -r ts-node/register/transpile-only bench/support/profile-summary.ts file.cpuprofile [top]`. Each sample is
 * counted once by its innermost frame's owner (this package's built code, Node-RED, another dependency, Node's own
 * JavaScript, native/V8 work, GC, idle), once by the outermost package frame on its stack ("under": the work this
 * package's code asked for, whatever ran it), and the top functions by self and by inclusive time are listed.
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

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const OURS = path.join(REPO_ROOT, 'nodes') + path.sep;

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

function label(frame: CallFrame): string {
  const url = frame.url.replace(/^file:\/\//, '').replace(REPO_ROOT + path.sep, '');
  const short = url.includes('node_modules/') ? url.slice(url.lastIndexOf('node_modules/') + 13) : url;
  return `${frame.functionName || '(anonymous)'} ${short}:${frame.lineNumber + 1}`;
}

export function summariseProfile(profile: Profile, top = 25): Record<string, unknown> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const leafOwner = new Map<string, number>();
  const under = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i + 1] ?? 0; // a sample's time is the delta to the next one
    const leaf = byId.get(profile.samples[i]);
    if (!leaf) continue;
    total += us;
    const owner = ownerOf(leaf.callFrame);
    leafOwner.set(owner, (leafOwner.get(owner) ?? 0) + us);
    self.set(label(leaf.callFrame), (self.get(label(leaf.callFrame)) ?? 0) + us);
    const seen = new Set<string>();
    let outermost = owner;
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      const l = label(frame);
      if (!seen.has(l)) inclusive.set(l, (inclusive.get(l) ?? 0) + us);
      seen.add(l);
      if (ownerOf(frame) === 'package') outermost = 'under package code';
    }
    if (outermost !== 'under package code' && ['(idle)', '(program)', '(garbage collector)'].includes(owner)) outermost = owner;
    else if (outermost !== 'under package code') outermost = 'not under package code';
    under.set(outermost, (under.get(outermost) ?? 0) + us);
  }
  const ms = (us: number): number => Math.round(us / 100) / 10;
  const sorted = (m: Map<string, number>, n: number): [string, number][] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => [k, ms(v)]);
  return {
    sampledMs: ms(total),
    byInnermostOwnerMs: Object.fromEntries(sorted(leafOwner, 50)),
    byPackageOnStackMs: Object.fromEntries(sorted(under, 10)),
    topSelfMs: sorted(self, top),
    topInclusiveMs: sorted(inclusive, top * 2),
  };
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: profile-summary.ts file.cpuprofile [top]');
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  console.log(JSON.stringify(summariseProfile(profile, Number(process.argv[3] ?? 25)), null, 1));
}
