/**
 * Review finding (metrics): instruments whose names make one label (two names alike in their first 64 characters,
 * two unnamed lh-servers of one host and port, names told apart only by a lone surrogate half, which the page writes
 * as U+FFFD) shared `lh_errors_pending` and `lh_instrument_up` as "whoever polled last": an instrument with errors
 * pending showed 0 once its neighbour without errors polled after it, and one offline showed up (an alert on pending
 * errors or on an instrument down went quiet, or flapped). Names that differ only in a lone surrogate half were two
 * series the page wrote alike: a duplicate series, one of whose samples Prometheus drops. Each gauge of a label now
 * says all of its instruments (pending: their sum, up: 0 while any is offline), as `other` did for its pending count.
 *
 * Seeded model: a drawn history of polls, connection changes, leases coming and going, instruments removed, added
 * and renamed; after every step the page is compared with the model, has no series twice (as it goes out: UTF-8),
 * and at the end of each case passes `promtool check metrics` where installed. `LH_SEED` / `LH_CASES` replay/extend.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

import fc from 'fast-check';

import { instrumentIdentity } from '../../src/coordination/instrument-identity';
import { type PendingErrorView } from '../../src/observe/lab-events';
import { clipLabel, hostOfUrl, LabMetrics } from '../../src/observe/metrics';

const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => {
  name: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}[];

const seed = Number(process.env.LH_SEED ?? Date.now() % 1_000_000);
const numRuns = Number(process.env.LH_CASES ?? 25);

const LONG = 'Hamilton STAR, north bench, left of the fume hood, lab 3.14, deck';
/** each instrument (its own URLs) and the names it may be given: many of them make one label */
const POOL: { key: string; names: string[] }[] = [
  { key: 'http://10.0.0.1:8080|', names: [`${LONG} A`, 'bay 1'] },
  { key: 'http://10.0.0.2:8080|', names: [`${LONG} B`, 'bay 1 '] },
  { key: 'http://10.0.0.3:8080|', names: ['bay \ud800', 'bay \ufffd'] },
  { key: 'http://10.0.0.4:8080|', names: ['bay \udc00', `${LONG} A`] },
  { key: 'http://h:1/a|', names: ['http://h:1/a', 'http://user:pw@h:1/'] },
  { key: 'http://h:1/b|', names: ['http://h:1/b', 'h:1'] },
  { key: 'http://10.0.0.7:8080|', names: ['bench "7"\n', 'bay 1'] },
];

type Step =
  | { kind: 'poll'; i: number; n: number }
  | { kind: 'connection'; i: number; online: boolean }
  | { kind: 'standby' | 'holder' | 'remove'; i: number }
  | { kind: 'add'; i: number; name: number };

const index = fc.integer({ min: 0, max: POOL.length - 1 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('poll' as const), i: index, n: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('connection' as const), i: index, online: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('standby' as const, 'holder' as const, 'remove' as const), i: index }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add' as const), i: index, name: fc.integer({ min: 0, max: 1 }) }) },
);

/** The label the README promises: a URL's host and port, at most 64 characters, a lone surrogate half as U+FFFD. */
function labelOf(name: string): string {
  return clipLabel(hostOfUrl(name)).replace(/\p{Cs}/gu, '\ufffd') || '_';
}

const errors = (n: number): PendingErrorView[] =>
  Array.from({ length: n }, (_, i) => ({ source: 'A' as const, id: String(i), title: `error ${i}`, severity: 'Error' }));

interface Modelled {
  present: boolean;
  name: string;
  standby: boolean;
  pending?: number;
  up?: number;
}

/** The gauges the page should show: per label, the sum of its instruments' pending, up 0 while any is offline. */
function expected(model: Modelled[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of model) {
    if (!m.present) continue;
    const label = labelOf(m.name);
    if (m.pending !== undefined) {
      const key = `lh_errors_pending|${label}`;
      out.set(key, (out.get(key) ?? 0) + m.pending);
    }
    if (m.up !== undefined) {
      const key = `lh_instrument_up|${label}`;
      out.set(key, Math.min(out.get(key) ?? 1, m.up));
    }
  }
  return out;
}

async function shown(metrics: LabMetrics): Promise<{ gauges: Map<string, number>; wire: string }> {
  const wire = Buffer.from((await metrics.render()).body, 'utf8').toString('utf8'); // as it goes out: lone halves U+FFFD
  const series = wire.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  const names = series.map((line) => line.slice(0, line.lastIndexOf(' ')));
  const twice = names.filter((name, i) => names.indexOf(name) !== i);
  assert.deepEqual(twice, [], 'a series written twice on the page');
  const gauges = new Map<string, number>();
  for (const family of parsePrometheus(wire))
    if (family.name === 'lh_errors_pending' || family.name === 'lh_instrument_up')
      for (const m of family.metrics) gauges.set(`${family.name}|${m.labels?.instrument ?? ''}`, Number(m.value));
  return { gauges, wire };
}

describe('review: instruments whose names make one metrics label (seeded model)', function () {
  it('each gauge of a label says all of its instruments, after any history; no series twice; promtool passes', async function () {
    console.log(`      seed ${seed} (LH_SEED to replay, LH_CASES to extend)`);
    const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p));
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (steps) => {
        const metrics = new LabMetrics(() => 0);
        const model: Modelled[] = POOL.map((p) => ({ present: true, name: p.names[0], standby: false }));
        const about = (i: number): { instrumentKey: string; instrument: string } => ({
          instrumentKey: POOL[i].key,
          instrument: model[i].name,
        });
        try {
          for (const i of POOL.keys()) metrics.observe({ ...about(i), kind: 'server', present: true });
          for (const step of steps) {
            const m = model[step.i];
            switch (step.kind) {
              case 'poll':
                if (!m.present) continue; // a watch of a removed lh-server polls no more
                metrics.observe({ ...about(step.i), kind: 'errors', pending: errors(step.n) });
                if (!m.standby) m.pending = step.n;
                break;
              case 'connection':
                if (!m.present) continue;
                metrics.observe({ ...about(step.i), kind: 'connection', state: step.online ? 'online' : 'offline' });
                if (!m.standby) m.up = step.online ? 1 : 0;
                break;
              case 'standby':
                if (!m.present) continue;
                metrics.observe({ ...about(step.i), kind: 'lease', holder: false });
                Object.assign(m, { standby: true, pending: undefined, up: undefined });
                break;
              case 'holder':
                if (!m.present) continue;
                metrics.observe({ ...about(step.i), kind: 'lease', holder: true });
                m.standby = false; // its next poll says
                break;
              case 'remove':
                if (!m.present) continue;
                metrics.observe({ ...about(step.i), kind: 'server', present: false });
                Object.assign(m, { present: false, standby: false, pending: undefined, up: undefined });
                break;
              case 'add':
                // a redeploy: its lh-server (renamed, or back in the flows) restarts
                if (m.present) metrics.observe({ ...about(step.i), kind: 'server', present: false });
                Object.assign(m, { present: true, name: POOL[step.i].names[step.name], standby: false });
                Object.assign(m, { pending: undefined, up: undefined });
                metrics.observe({ ...about(step.i), kind: 'server', present: true });
                break;
            }
            const { gauges } = await shown(metrics);
            assert.deepEqual(
              [...gauges].sort(),
              [...expected(model)].sort(),
              `after ${JSON.stringify(step)}: ${JSON.stringify(model)}`,
            );
          }
          const { wire } = await shown(metrics);
          assert.ok(!wire.includes('pw@') && !wire.includes('/a"') && !wire.includes('/b"'), 'no URL or secret as a label');
          if (promtool) {
            const checked = spawnSync(promtool, ['check', 'metrics'], { input: wire, encoding: 'utf8' });
            assert.equal(checked.status, 0, `promtool check metrics: ${checked.stdout}${checked.stderr}`);
          }
        } finally {
          metrics.close();
        }
      }),
      { seed, numRuns },
    );
  });

  it('one instrument under two lh-server nodes (its URLs spelled two ways, one name) counts once, as its latest poll', async function () {
    const metrics = new LabMetrics(() => 0, instrumentIdentity);
    try {
      const one = { instrumentKey: 'http://localhost:8080/|', instrument: 'bay 9' };
      const two = { instrumentKey: 'HTTP://127.0.0.1:8080|', instrument: 'bay 9' };
      for (const about of [one, two]) metrics.observe({ ...about, kind: 'server', present: true });
      metrics.observe({ ...one, kind: 'errors', pending: errors(2) });
      metrics.observe({ ...two, kind: 'errors', pending: errors(2) });
      assert.equal((await shown(metrics)).gauges.get('lh_errors_pending|bay 9'), 2);
      metrics.observe({ ...one, kind: 'errors', pending: errors(1) });
      assert.equal((await shown(metrics)).gauges.get('lh_errors_pending|bay 9'), 1);
      metrics.observe({ ...one, kind: 'server', present: false });
      assert.equal((await shown(metrics)).gauges.get('lh_errors_pending|bay 9'), 2, "the other node's last poll");
    } finally {
      metrics.close();
    }
  });
});
