/**
 * Errors raised together share one deck photo (one per instrument per 10 s): their msgs carry the same Buffer. The
 * answer page counted its 64 MiB of kept photos per link, not per photo: a burst of 20 errors with a 4 MiB photo
 * counted 80 MiB for the 4 MiB it holds, and the first links' photo was let go at once (404 through
 * `msg.snapshotUrl` just sent). Now each photo's bytes count once, however many links keep it; the bound on memory
 * (64 MiB, 200 links) holds all the same: distinct photos still push the oldest out.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { PagePhotos } from '../../src/nodes/deck/page-photos';
import { fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { collect, helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const MiB = 1024 * 1024;

function photo(bytes: number, fill: number): Buffer {
  const b = Buffer.alloc(bytes, fill);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b);
  return b;
}

function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

describe('review: the answer page keeps a burst’s shared photo once', function () {
  this.timeout(20000);
  const { sim, pageNode } = usePageSuite();

  it('20 errors raised together with one 4 MiB photo: every link serves it', async function () {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage([...server.nodes, pageNode({ path: '/lh-answer', wires: [['out'], []] }), { id: 'out', type: 'helper' }], {
      ...server.credentials,
      page: { secret: 'test-secret-not-shown' },
    });
    const out = collect(helper.getNode('out'));
    const shot = { contentType: 'image/png', content: photo(4 * MiB, 1), takenAt: '2026-11-30T10:00:00.000Z' };
    for (let i = 0; i < 20; i++) {
      const error = sim.injectPendingError({ title: `Clot detected ${i}` });
      helper.getNode('page').receive({ payload: error, source: 'A', event: 'raised', notification: 'n', snapshot: shot });
    }
    await until(() => out.length === 20, 'every msg linked', 10_000);
    const codes = await Promise.all(out.map((m: Msg) => status(String(m.snapshotUrl))));
    assert.deepEqual(codes, Array(20).fill(200), 'each link of the burst serves the photo its msg carried');
    const page = await fetchText(String(out[0].answerUrl));
    assert.match(page.text, /photo=raised/);
  });

  it('the bound holds: distinct photos push the oldest out past 64 MiB, shared ones count once', function () {
    const photos = new PagePhotos(200, 64 * MiB);
    const far = Date.now() + 3_600_000;
    const shared = { contentType: 'image/png' as const, content: photo(16 * MiB, 2), takenAt: '' };
    for (let i = 0; i < 50; i++) photos.keep(`s${i}`, shared, far);
    assert.equal(photos.size, 50);
    assert.equal(photos.heldBytes, 16 * MiB);
    for (let i = 0; i < 4; i++) {
      photos.keep(`d${i}`, { contentType: 'image/png', content: photo(16 * MiB, 3 + i), takenAt: '' }, far);
    }
    assert.ok(photos.heldBytes <= 64 * MiB, `held ${photos.heldBytes}`);
    assert.equal(photos.get('s0'), undefined, 'the shared photo went with its links, the oldest');
    assert.ok(photos.get('d3'), 'the newest is kept');
    photos.close();
    assert.equal(photos.heldBytes, 0);
  });
});
