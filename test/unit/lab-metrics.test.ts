import assert from 'node:assert/strict';

import fc from 'fast-check';

import { publishLab } from '../../src/observe/lab-events';
import { LabMetrics, MAX_INSTRUMENTS } from '../../src/observe/metrics';

const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => {
  name: string;
  metrics: { labels?: Record<string, string>; value?: string; count?: string; sum?: string }[];
}[];

async function families(metrics: LabMetrics): Promise<Map<string, ReturnType<typeof parsePrometheus>[number]>> {
  const page = await metrics.render();
  return new Map(parsePrometheus(page.body).map((f) => [f.name, f]));
}

describe('lab metrics (prom-client registry of the package)', function () {
  let now = 0;
  let metrics: LabMetrics;
  beforeEach(function () {
    now = 1_000_000;
    metrics = new LabMetrics(
      () => now,
      undefined,
      () => now,
    ); // one model clock for both
  });
  afterEach(function () {
    metrics.close();
  });

  it('counts an error raised once however many watch nodes publish it, and the time from raised to answered by who answered', async function () {
    const about = { instrumentKey: 'k1', instrument: 'Bench 1' };
    const error = { source: 'A' as const, id: '42', title: 'Clot', severity: 'Fatal' };
    publishLab({ ...about, kind: 'raised', error, raisedAt: now - 30 });
    publishLab({ ...about, kind: 'raised', error, raisedAt: now - 30 }); // a second lh-error-poll of the instrument
    now += 90_000;
    publishLab({ instrumentKey: 'k1', instrument: '', kind: 'answered', source: 'A', id: '42', by: 'page' });
    const f = await families(metrics);
    const raised = f.get('lh_errors_raised_total')?.metrics ?? [];
    assert.deepEqual(
      raised.map((m) => [m.labels, Number(m.value)]),
      [[{ instrument: 'Bench 1', source: 'A', severity: 'fatal' }, 1]],
    );
    const answered = f.get('lh_errors_answered_total')?.metrics ?? [];
    assert.deepEqual(answered[0].labels, { instrument: 'Bench 1', source: 'A', severity: 'fatal', by: 'page' });
    // histograms read off the page's lines (the parser keeps only the buckets of a labelled histogram)
    const page = (await metrics.render()).body;
    assert.match(page, /^lh_error_time_to_answer_seconds_count\{source="A"\} 1$/m);
    assert.match(page, /^lh_error_time_to_answer_seconds_sum\{source="A"\} 90$/m);
    assert.match(page, /^lh_error_detection_seconds_count\{source="A"\} 1$/m);
    assert.ok(f.has('lh_error_time_to_answer_seconds'));
  });

  it('keeps label values bounded: instrument names capped, severities and results from fixed sets, no id or free text', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ name: fc.string({ maxLength: 80 }), severity: fc.string(), id: fc.uuid(), result: fc.string() }), {
          maxLength: 40,
        }),
        async (events) => {
          const m = new LabMetrics(
            () => now,
            undefined,
            () => now,
          ); // one model clock for both
          try {
            for (const e of events) {
              m.observe({
                instrumentKey: e.name,
                instrument: e.name,
                kind: 'raised',
                error: { source: 'B', id: e.id, title: 'x', severity: e.severity },
                raisedAt: now,
              });
              m.observe({ instrumentKey: e.name, instrument: e.name, kind: 'run-finished', result: e.result });
            }
            const page = (await m.render()).body;
            for (const e of events) assert.ok(!page.includes(e.id));
            const f = new Map(parsePrometheus(page).map((x) => [x.name, x]));
            for (const s of f.get('lh_errors_raised_total')?.metrics ?? [])
              assert.ok(['fatal', 'error', 'warning', 'info', 'other'].includes(String(s.labels?.severity)));
            for (const s of f.get('lh_runs_finished_total')?.metrics ?? [])
              assert.ok(['completed', 'aborted', 'failed', 'unknown'].includes(String(s.labels?.result)));
          } finally {
            m.close();
          }
        },
      ),
      { numRuns: 30 },
    );
    for (let i = 0; i < MAX_INSTRUMENTS + 500; i++)
      metrics.observe({ instrumentKey: `k${i}`, instrument: `bench ${i}`, kind: 'connection', state: 'online' });
    const up = (await families(metrics)).get('lh_instrument_up')?.metrics ?? [];
    assert.equal(up.length, MAX_INSTRUMENTS + 1); // the first 1,000 names and "other"
    assert.ok(up.some((s) => s.labels?.instrument === 'other'));
  });
});
