/**
 * Review of the metrics' running sums (review78: each label's pending and up gauges kept as reports come, an
 * instrument's share taken out before its report and put back after). Seeded model: drawn reports (the same one
 * twice, per source or both), offline/online, leases moving, lh-servers added and removed (a report after the
 * removal), renames (two names of one label, names moving between labels), one instrument under two URL spellings;
 * invariant: after every step each label's gauges on the page equal a recount from scratch of what is kept (per
 * label, per instrument identity, its latest report: pending summed, up 0 while any is offline), and no label shows a
 * gauge the recount does not have. `LH_SEED` / `LH_CASES` replay/extend.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { instrumentIdentity } from '../../src/coordination/instrument-identity';
import type { LabEvent, PendingErrorView } from '../../src/observe/lab-events';
import { LabMetrics } from '../../src/observe/metrics';

const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => {
  name: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}[];

const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
const numRuns = Number(process.env.LH_CASES ?? 25);

/** instrument keys: 0 and 1 are one instrument spelled two ways, 2 and 3 another */
const KEYS = ['http://10.0.0.1:8080|', 'HTTP://10.0.0.1:8080/|', 'http://h:1|', 'http://H:1/|', 'http://10.0.0.9:1|'];
const NAMES = ['bay 1', 'bay 2', 'http://h:1/a', 'h:1', 'bay 1'];

type Step =
  | { kind: 'poll'; k: number; n: number; src: 0 | 1 | 2; name: number }
  | { kind: 'connection'; k: number; online: boolean; name: number }
  | { kind: 'standby' | 'holder' | 'lost' | 'add' | 'remove' | 'again'; k: number; name: number };

const k = fc.integer({ min: 0, max: KEYS.length - 1 });
const name = fc.integer({ min: 0, max: NAMES.length - 1 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('poll' as const),
      k,
      n: fc.integer({ min: 0, max: 3 }),
      src: fc.constantFrom(0 as const, 1 as const, 2 as const),
      name,
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('connection' as const), k, online: fc.boolean(), name }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom(
        'standby' as const,
        'holder' as const,
        'lost' as const,
        'add' as const,
        'remove' as const,
        'again' as const,
      ),
      k,
      name,
    }),
  },
);

interface Kept {
  identity: string;
  label: string;
  pending?: Map<string, number>;
  pendingAt: number;
  up?: number;
  upAt: number;
}

/** The gauges recounted from scratch from what the metrics keep. */
function recount(metrics: LabMetrics): Map<string, number> {
  const seen = (metrics as unknown as { seen: Map<string, Kept> }).seen;
  const pendingOf = new Map<string, { n: number; at: number }>();
  const upOf = new Map<string, { n: number; at: number }>();
  for (const s of seen.values()) {
    const id = `${s.label}\u0000${s.identity}`;
    if (s.pending && (pendingOf.get(id)?.at ?? -1) < s.pendingAt)
      pendingOf.set(id, { n: [...s.pending.values()].reduce((a, b) => a + b, 0), at: s.pendingAt });
    if (s.up !== undefined && (upOf.get(id)?.at ?? -1) < s.upAt) upOf.set(id, { n: s.up, at: s.upAt });
  }
  const out = new Map<string, number>();
  for (const [id, p] of pendingOf) {
    const key = `lh_errors_pending|${id.split('\u0000')[0]}`;
    out.set(key, (out.get(key) ?? 0) + p.n);
  }
  for (const [id, p] of upOf) {
    const key = `lh_instrument_up|${id.split('\u0000')[0]}`;
    out.set(key, Math.min(out.get(key) ?? 1, p.n));
  }
  return out;
}

async function shown(metrics: LabMetrics): Promise<Map<string, number>> {
  const gauges = new Map<string, number>();
  for (const family of parsePrometheus((await metrics.render()).body))
    if (family.name === 'lh_errors_pending' || family.name === 'lh_instrument_up')
      for (const m of family.metrics) gauges.set(`${family.name}|${m.labels?.instrument ?? ''}`, Number(m.value));
  return gauges;
}

const errors = (n: number, source: 'A' | 'B'): PendingErrorView[] =>
  Array.from({ length: n }, (_, i) => ({ source, id: String(i), title: `e${i}`, severity: 'Error' }));

describe('review: the metrics running sums against a recount (seeded model)', function () {
  it("after every step, each label's gauges equal a recount from scratch of what is kept", async function () {
    console.log(`      seed ${seed} (LH_SEED to replay, LH_CASES to extend)`);
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 60 }), async (steps) => {
        const metrics = new LabMetrics(() => 0, instrumentIdentity);
        let last: LabEvent | undefined;
        try {
          for (let i = 0; i < KEYS.length; i++)
            metrics.observe({ instrumentKey: KEYS[i], instrument: NAMES[i], kind: 'server', present: true });
          for (const [at, step] of steps.entries()) {
            const about = { instrumentKey: KEYS[step.k], instrument: NAMES[step.name] };
            let event: LabEvent | undefined;
            if (step.kind === 'poll') {
              const sources = step.src === 2 ? undefined : [step.src === 0 ? ('A' as const) : ('B' as const)];
              const pending = [...errors(step.n, sources?.[0] ?? 'A'), ...(sources ? [] : errors(step.n, 'B'))];
              event = { ...about, kind: 'errors', pending, ...(sources ? { sources } : {}) };
            } else if (step.kind === 'connection')
              event = { ...about, kind: 'connection', state: step.online ? 'online' : 'offline', reason: 'r' };
            else if (step.kind === 'standby' || step.kind === 'holder' || step.kind === 'lost')
              event = { ...about, kind: 'lease', holder: step.kind === 'holder', lost: step.kind === 'lost' };
            else if (step.kind === 'add' || step.kind === 'remove')
              event = { ...about, kind: 'server', present: step.kind === 'add' };
            else event = last; // the same report twice
            if (event) metrics.observe(event);
            if (event?.kind === 'errors' || event?.kind === 'connection') last = event;
            assert.deepEqual(
              Object.fromEntries([...(await shown(metrics))].sort()),
              Object.fromEntries([...recount(metrics)].sort()),
              `after step ${at} ${JSON.stringify(step)}`,
            );
          }
        } finally {
          metrics.close();
        }
      }),
      { seed, numRuns },
    );
  });
});
