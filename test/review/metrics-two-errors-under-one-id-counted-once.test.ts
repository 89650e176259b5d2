/**
 * Review finding: the instrument may list two errors under one id with different titles (the 0.3 identity rule; the
 * state document counts them as two, README "Watching a lab"). `lh_errors_raised_total` took the second for the first
 * one raised again by another watch node and counted one raise for two errors. A raise is now the same one when its
 * id and its title are the same; the time to answer still follows the error of that id.
 */
import assert from 'node:assert/strict';

import { LabMetrics } from '../../src/observe/metrics';

describe('review: metrics of two errors under one id', function () {
  it('counts two raises for two titles under one id, one for the same error published twice', async function () {
    let now = 1_000_000;
    const metrics = new LabMetrics(() => now);
    try {
      const about = { instrumentKey: 'k', instrument: 'Bench' };
      const clot = { source: 'A' as const, id: '7', title: 'Clot', severity: 'Error' };
      const foam = { ...clot, title: 'Foam' };
      metrics.observe({ ...about, kind: 'raised', error: clot, raisedAt: now });
      metrics.observe({ ...about, kind: 'raised', error: clot, raisedAt: now }); // a second watch node
      metrics.observe({ ...about, kind: 'raised', error: foam, raisedAt: now });
      now += 30_000;
      metrics.observe({ ...about, kind: 'answered', source: 'A', id: '7', by: 'page' });
      const body = (await metrics.render()).body;
      assert.match(body, /lh_errors_raised_total\{instrument="Bench",source="A",severity="error"\} 2/);
      assert.match(body, /lh_error_time_to_answer_seconds_count\{source="A"\} 1/);
      assert.match(body, /lh_errors_answered_total\{instrument="Bench",source="A",severity="error",by="page"\} 1/);
    } finally {
      metrics.close();
    }
  });
});
