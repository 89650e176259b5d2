/**
 * The answer page shares one read of the instrument's error list among the views of a short interval, and never uses
 * a list read before a link was made for that link. Against the wall clock stepping (an NTP step, a VM resumed):
 * drawn histories of steps back and forward between the views of fresh links, in a real Node-RED runtime with the
 * simulator. Every fresh link shows its error with its buttons: a list read before a step back is never shared for
 * the step's length, nor taken for one read after a link made since (which showed "no longer pending" with no
 * buttons, and the person could not answer from the page). LH_SEED / LH_CASES replay or extend the drawn histories.
 */
import assert from 'node:assert/strict';

import FakeTimers from '@sinonjs/fake-timers';

import { fetchText, formOf, loadWithPage, usePageSuite } from '../nodes/lh-answer-page.support';
import { bServerFlow } from '../nodes/lh-error-poll.support';
import { Rng } from '../support/prng';
import { helper, nextMessage } from '../support/runtime';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 10;
const MIN = 60_000;
const HOUR = 60 * MIN;

describe('review: the answer page after the wall clock steps', function () {
  this.timeout(15000);
  // the simulator runs in this process, on the Date faked here: its 5-minute tokens would expire with the drawn steps
  // forward (a second refusal within 10 s of a login is not logged in again for, by design: the page said 502; seed
  // 778304224), which the instrument's own clock never did; a lifetime beyond every drawn history keeps its session
  // out of the case
  const { sim, pageWithOutputs } = usePageSuite({ simulator: { tokenLifetimeSeconds: 365 * 24 * 3600 } });
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });

  async function load(): Promise<void> {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage([...server.nodes, ...pageWithOutputs()], {
      ...server.credentials,
      page: { secret: 'test-secret-not-shown' },
    });
  }

  async function freshLink(): Promise<string> {
    const error = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] });
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: error, source: 'A', event: 'raised' });
    return String((await out).answerUrl);
  }

  it(`a fresh link shows its error's buttons whatever the wall clock did (seed ${SEED}, ${CASES} steps)`, async function () {
    console.log(`      clock-history seed: LH_SEED=${SEED}`);
    const rng = new Rng(SEED);
    await load();
    // a view before any step: the list it read is the one a step back would have kept
    assert.equal(formOf((await fetchText(await freshLink())).text).buttons.length, 2);
    clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() });
    const trace: string[] = [];
    for (let i = 0; i < CASES; i++) {
      const by = (rng.weighted({ back: 3, forward: 1 }) === 'back' ? -1 : 1) * rng.pick([5_000, MIN, HOUR, 24 * HOUR]);
      clock.setSystemTime(Date.now() + by);
      trace.push(`step ${by} ms`);
      const page = await fetchText(await freshLink());
      assert.equal(page.status, 200, page.text);
      assert.doesNotMatch(page.text, /no longer pending/, `seed ${SEED}: ${trace.join(', ')}`);
      assert.deepEqual(
        formOf(page.text).buttons.map((b) => b.label),
        ['Retry', 'Abort'],
        `seed ${SEED}: ${trace.join(', ')}`,
      );
    }
  });

  it('views within the interval still share one read of the list (no step)', async function () {
    await load();
    const links = [await freshLink(), await freshLink()];
    const reads = (): number => sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/errors').length;
    await fetchText(links[1]);
    const before = reads();
    for (let i = 0; i < 3; i++) await fetchText(links[0]);
    assert.equal(reads(), before, 'the views of a link made before the last read share it');
  });
});
