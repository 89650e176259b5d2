/**
 * Hostile review finding: a deploy while an lh-answer-page node makes a raised error's link and takes its deck photo
 * (lh-error-poll's *Deck photo* unticked, the page's ticked: README "the answer page takes it as it makes the link",
 * up to 2 s). The poll had taken the error as reported; the page's msg then left the closed node into a flow Node-RED
 * had stopped (a full deploy, Node-RED's default) and was dropped: the notification was lost for good. And every
 * photo a page node kept went with the node on any deploy that restarted it, though the README keeps them "until
 * the link expires": `msg.snapshotUrl` already posted to chat turned into a 404. Now the page hands what it has under
 * way and the photos it keeps to its next instance (the same node id), as lh-error-poll hands its msgs over.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { imageType } from '../../src/client';
import { fetchText, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow, pollNode, recordDeliveries, stopRecording } from '../nodes/lh-error-poll.support';
import { useHeldCamera } from '../support/camera-proxy';
import { helper } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

/** GET as bytes. */
function fetchBytes(url: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('lh-answer-page: a deploy while a raised msg waits for the page’s photo', function () {
  this.timeout(30000);
  const { sim, pageNode } = usePageSuite({ afterEach: () => stopRecording() });
  const camera = useHeldCamera(sim);

  /** poll (photo off) → page (photo on) → out; `name` differs per deploy so that every node counts as changed */
  const flow = (name: string, page: Msg = {}): { nodes: Msg[]; credentials: Record<string, Record<string, string>> } => {
    const server = bServerFlow(sim, { withB: false, config: { baseUrl: camera.url } });
    return {
      nodes: [
        ...server.nodes,
        pollNode([['page'], [], []], { name, interval: 0.3, snapshot: false }),
        pageNode({ name, wires: [['out'], []], ...page }),
        { id: 'out', type: 'helper', name },
      ],
      credentials: { ...server.credentials, page: { secret: 'test-secret-not-shown' } },
    };
  };

  async function loadFirst(): Promise<Msg[]> {
    const out = recordDeliveries('out');
    const first = flow('one');
    await loadWithPage(first.nodes, first.credentials);
    await until(() => sim.requests.some((r) => r.path === '/api/v1/errors/check-for-pending-errors'), 'first poll', 10000);
    return out;
  }

  for (const deploy of ['full', 'flows', 'nodes'] as const) {
    it(`a ${deploy} deploy while the camera does not answer: the notification goes out once, with its link`, async function () {
      const out = await loadFirst();
      const error = sim.injectPendingError({ title: 'Arm collision' });
      await until(() => camera.held.length === 1, 'the page asked the camera', 10000);
      camera.hold = false;
      const next = flow('two');
      await helper.setFlows(next.nodes, deploy, next.credentials);
      await until(() => out.length > 0, 'the notification', 10000).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 2500)); // past the old node's 2 s wait: nothing more comes
      assert.deepEqual(
        out.map((m) => m.errorId),
        [error.id],
        'the error notified exactly once across the deploy',
      );
      assert.match(String(out[0].answerUrl), /\?t=/);
      // no photo: the camera did not answer in 2 s, or (the lh-server redeployed too) its request was ended
      assert.equal(out[0].snapshotUrl, undefined);
      assert.equal(typeof out[0].snapshotError, 'string');
      assert.equal((await fetchText(String(out[0].answerUrl))).status, 200, 'the link opens on the new node');
    });
  }

  it('a deploy of the page alone while its photo comes in: the msg goes out with it, and the new node serves it', async function () {
    const out = await loadFirst();
    const error = sim.injectPendingError({ title: 'Arm collision' });
    await until(() => camera.held.length === 1, 'the page asked the camera', 10000);
    // the page changed, the lh-server not (its camera request goes on)
    const next = flow('one');
    Object.assign(next.nodes.find((n) => n.id === 'page') as Msg, { name: 'two' });
    const deployed = helper.setFlows(next.nodes, 'nodes', next.credentials);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the deploy has begun: the page is closing
    const [held] = camera.held.splice(0);
    held.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': PNG.length });
    held.end(PNG);
    await deployed;
    await until(() => out.length > 0, 'the notification', 10000);
    assert.deepEqual(
      out.map((m) => m.errorId),
      [error.id],
    );
    const photo = await fetchBytes(String(out[0].snapshotUrl));
    assert.equal(photo.status, 200, 'msg.snapshotUrl is served after the deploy');
    assert.deepEqual(photo.body, PNG);
  });

  it('photos kept before a deploy are still served after it, until their link expires; none once the page stops taking them', async function () {
    camera.hold = false;
    const out = await loadFirst();
    sim.injectPendingError({ title: 'Arm collision' });
    await until(() => out.length === 1, 'the notification', 10000);
    const url = String(out[0].snapshotUrl);
    assert.equal(imageType((await fetchBytes(url)).body), 'image/png');
    for (const deploy of ['full', 'flows', 'nodes'] as const) {
      const next = flow(`after ${deploy}`);
      await helper.setFlows(next.nodes, deploy, next.credentials);
      const photo = await fetchBytes(url);
      assert.equal(photo.status, 200, `served after a ${deploy} deploy`);
      assert.equal(imageType(photo.body), 'image/png');
    }
    // the page's *Deck photo* unticked: what it kept goes (the privacy switch), and nothing is served
    const off = flow('photos off', { snapshot: false });
    await helper.setFlows(off.nodes, 'full', off.credentials);
    const on = flow('photos on again');
    await helper.setFlows(on.nodes, 'full', on.credentials);
    const gone = await fetchBytes(url);
    assert.equal(gone.status, 404);
    assert.equal(imageType(gone.body), undefined);
  });

  it('photos off in the deploy that moves the page to another instrument: moved back, what it kept is gone', async function () {
    // review53: the kept photos waited in the first instrument's home, where the next instance (of another
    // instrument) never looked: the privacy switch let them be, they came back with the page, and meanwhile they
    // weighed on top of the node's 200 photos / 64 MiB
    camera.hold = false;
    const out = await loadFirst();
    sim.injectPendingError({ title: 'Arm collision' });
    await until(() => out.length === 1, 'the notification', 10000);
    const url = String(out[0].snapshotUrl);
    assert.equal((await fetchBytes(url)).status, 200);
    const other = bServerFlow(sim, { id: 'server2', withB: false, config: { name: 'bay 9' } });
    const away = flow('away', { server: 'server2', snapshot: false });
    away.nodes.push(...other.nodes);
    await helper.setFlows(away.nodes, 'nodes', { ...away.credentials, ...other.credentials });
    const back = flow('back');
    await helper.setFlows(back.nodes, 'nodes', back.credentials);
    const gone = await fetchBytes(url);
    assert.equal(gone.status, 404, 'unticked, what the page kept went');
  });
});
