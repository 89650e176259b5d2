import assert from 'node:assert/strict';

import { until } from '../../support/embedded-red';
import { debugValue, E2e, exampleFlow, formPost, pageForm, useEnv } from './common';

/**
 * The example's wait where nobody answers, shortened from 2 minutes: the test waits for the default to go out.
 */
const NOBODY_WAIT_MS = 1000;

export function recoverySuite(ctx: E2e): void {
  describe('04 Walk-away recovery', function () {
    useEnv(() => ({ LH_PUBLIC_URL: ctx.red.url }));
    /** Deploys the example with its one step's wait set to `waitMs` (undefined: the example's own 2 minutes). */
    const deploy = async (waitMs?: number): Promise<void> => {
      const { flow, credentials, node } = exampleFlow('04 ', ctx.sim);
      // the example carries its rules as ladders (node scripts/fill-examples.js): one step here
      const rules = node('lh-ex04-policy').rules as { steps: { mode: string; delay: number }[] }[];
      assert.equal(rules[0].steps[0].mode, 'semi-automatic');
      assert.equal(rules[0].steps[0].delay, 120, 'a person has 2 minutes');
      if (waitMs !== undefined) rules[0].steps[0].delay = waitMs / 1000;
      await ctx.red.deploy(flow, credentials);
      // registered when the flow starts ("while deployed")
      await until('the error handler registration', () => ctx.sim.state.handlers.has('nodered'));
    };

    const submissions = (uuid: string) =>
      ctx.sim.requests.filter((r) => r.method === 'POST' && r.path.includes(`/instrument-errors/${uuid}/`));

    it('submits the default action once when nobody answers in time', async function () {
      await deploy(NOBODY_WAIT_MS);
      const notified = ctx.red.nextDebug('lh-ex04-notify');
      // bounded by the test's 20 s, not debug's 10 s from here: the poll, the decision and the wait (1 s quiet)
      const submitted = ctx.red.nextDebug('lh-ex04-autodbg', undefined, 19_000);
      const error = ctx.sim.injectInstrumentError({ title: 'Aspiration error' });
      // the debug node shows the link first (its preview is cut after a few dozen characters), then the notification
      const shown = debugValue(await notified) as { answerUrl: string; notification: string };
      assert.deepEqual(Object.keys(shown), ['answerUrl', 'notification']);
      const text = shown.notification;
      assert.ok(text.includes(`Answer here: ${shown.answerUrl}\n`), 'the notification has the same link');
      assert.match(text, /Actions: 1 Retry \(default\)/);
      assert.match(text, /Unless someone answers by .* UTC[+-]\d\d:\d\d.*, the policy answers: 1 Retry \(default\)/);
      assert.match(text, /Answer here: http:\/\/127\.0\.0\.1:\d+\/lh-answer\?t=/);
      const answer = debugValue(await submitted) as { outcome: string; response: string };
      assert.equal(answer.outcome, 'answered');

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

    it("submits the person's choice from the answer page when they answer first, and the default then submits nothing", async function () {
      // The example's own 2 minutes: the person (this test: a debug msg over the editor's socket, a GET of the page, a
      // POST of the form) answers within them on any machine. At a 5 s wait, waited out twice over, the person's part
      // took 4.5 s of the 5 on a busy machine (at 0.8 s the default went first): a window a slower one misses.
      await deploy();
      const notified = ctx.red.nextDebug('lh-ex04-notify');
      const automatic = ctx.red.collectDebug('lh-ex04-autodbg');
      const escalated = ctx.red.collectDebug('lh-ex04-escdbg');
      const policy = ctx.red.collectStatus('lh-ex04-policy');
      const error = ctx.sim.injectInstrumentError({ title: 'Gripper collision' });
      const link = (debugValue(await notified) as { answerUrl: string }).answerUrl;
      await until('the default pending at the policy', () => policy.includes('1 default(s) pending'));
      const page = await ctx.red.request('GET', link.slice(ctx.red.url.length));
      assert.equal(page.status, 200);
      assert.match(page.text, /class="default">Retry \(default\)/);

      const res = await formPost(link.split('?')[0], { ...pageForm(page.text), action: '4', by: 'operator' });
      assert.equal(res.status, 200, res.text);
      assert.match(res.text, /Answered with <b>Abort the run \(action 4\)<\/b> by operator/);
      const record = ctx.sim.state.instrumentErrors.find((e) => e.uuid === error.uuid);
      assert.equal(record?.selectedActionId, 4);
      assert.match(submissions(error.uuid)[0].path, /\/action$/, 'Abort the run is an action, not a recovery');

      // The default submits nothing: the policy dropped it (its timer with it) once the page's answer was made, which
      // its status says ("no default pending"); waited for, not a fixed time a 2-minute default could not fill
      await until(
        'the policy dropping its pending default',
        () => policy.indexOf('no default pending', policy.indexOf('1 default(s) pending')) > 0,
      );
      assert.equal(submissions(error.uuid).length, 1, 'the default submitted too');
      assert.deepEqual(automatic, []);
      assert.deepEqual(escalated, []);
      assert.equal(record?.rejectedSubmissions, 0);
    });

    it('refuses a forged answer link with a plain 403 page, and sends nothing', async function () {
      await deploy();
      const res = await ctx.red.request('GET', '/lh-answer?t=eyJpIjoieCJ9.AAAA');
      assert.equal(res.status, 403);
      assert.equal(ctx.sim.requests.filter((r) => r.method === 'POST' && r.path.includes('/instrument-errors/')).length, 0);
    });
  });
}
