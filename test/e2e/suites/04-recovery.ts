import assert from 'node:assert/strict';
import { until } from '../../support/embedded-red';
import { E2e, debugValue, delay, exampleFlow } from './common';

/** The example's wait, shortened from 2 minutes. */
const WAIT_MS = 800;

export function recoverySuite(ctx: E2e): void {
  describe('04 Walk-away recovery', function () {
    beforeEach(async function () {
      const { flow, credentials, node } = exampleFlow('04 ', ctx.sim);
      Object.assign(node('lh-ex04-timer'), { duration: String(WAIT_MS), units: 'ms' });
      await ctx.red.deploy(flow, credentials);
      // registered when the flow starts ("while deployed")
      await until('the error handler registration', () => ctx.sim.state.handlers.has('nodered'));
    });

    const submissions = (uuid: string) =>
      ctx.sim.requests.filter((r) => r.method === 'POST' && r.path.includes(`/instrument-errors/${uuid}/`));

    it('submits the default action once when nobody answers in time', async function () {
      const notified = ctx.red.nextDebug('lh-ex04-notify');
      const submitted = ctx.red.nextDebug('lh-ex04-autodbg');
      const error = ctx.sim.injectInstrumentError({ title: 'Aspiration error' });
      assert.match(String(debugValue(await notified)), /Actions: 1 Retry \(default\)/);
      const answer = debugValue(await submitted) as { success: boolean };
      assert.equal(answer.success, true);

      const record = ctx.sim.state.instrumentErrors.find((e) => e.uuid === error.uuid);
      assert.ok(record);
      assert.equal(record.handled, true);
      assert.equal(record.handledBy, 'nodered');
      assert.equal(record.selectedActionId, error.defaultActionId);
      assert.equal(record.acceptedSubmissions, 1);
      assert.equal(record.rejectedSubmissions, 0);
      const posted = submissions(error.uuid);
      assert.equal(posted.length, 1);
      assert.match(posted[0].path, /\/recovery$/, 'Retry is a recovery solution');
      assert.equal((posted[0].body as { errorHandlingKey: string }).errorHandlingKey, 'nodered');
    });

    it("submits the person's choice when they answer first, and the timeout then submits nothing", async function () {
      const notified = ctx.red.nextDebug('lh-ex04-notify');
      const automatic = ctx.red.collectDebug('lh-ex04-autodbg');
      const refused = ctx.red.collectDebug('lh-ex04-refdbg');
      const error = ctx.sim.injectInstrumentError({ title: 'Gripper collision' });
      await notified;

      const res = await ctx.red.request('GET', `/lh/recover?uuid=${error.uuid}&action=4`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.text, `Submitted action 4 for ${error.uuid}.`);
      const record = ctx.sim.state.instrumentErrors.find((e) => e.uuid === error.uuid);
      assert.equal(record?.selectedActionId, 4);
      assert.match(submissions(error.uuid)[0].path, /\/action$/, 'Abort the run is an action, not a recovery');

      // Nothing announces a submission that does not happen: wait out the (shortened) timeout, twice over.
      await delay(2 * WAIT_MS);
      assert.equal(submissions(error.uuid).length, 1, 'the timeout submitted again');
      assert.deepEqual(automatic, []);
      assert.deepEqual(refused, []);
      assert.equal(record?.rejectedSubmissions, 0);
    });

    it("answers 404 to a person's answer for an error it does not know, and sends nothing", async function () {
      const res = await ctx.red.request('GET', '/lh/recover?uuid=00000000-0000-4000-8000-000000000000&action=1');
      assert.equal(res.status, 404);
      assert.equal(ctx.sim.requests.filter((r) => r.method === 'POST' && r.path.includes('/instrument-errors/')).length, 0);
    });
  });
}
