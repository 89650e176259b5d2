// The example flows of examples/, each deployed into one real Node-RED runtime (embedded in this process, loading
// this package from package.json) against a fresh simulator, with their effect checked where it lands: a mail at an
// SMTP server, a chat message at a webhook receiver, the simulator's state and request log.
import { Simulator } from '../../src/simulator';
import { startEmbeddedRed, stopEmbeddedRed } from '../support/embedded-red';
import { emailSuite } from './suites/01-email';
import { chatSuite } from './suites/02-chat';
import { stepsSuite } from './suites/03-steps';
import { recoverySuite } from './suites/04-recovery';
import { dailySuite } from './suites/05-daily';
import { limsRunSuite } from './suites/06-lims-run';
import { dashboardSuite } from './suites/07-dashboard';
import { dialogsSuite } from './suites/08-dialogs';
import { auditSuite } from './suites/09-audit';
import { protocolsSuite } from './suites/10-protocols';
import { labStateSuite } from './suites/11-lab-state';
import { type E2e, USER } from './suites/common';
import { crossSiteSuite } from './suites/cross-site';

// Node-RED's runtime can start once per process, and the node tests' helper uses the same runtime after this file:
// every suite that needs the embedded runtime runs here, under one start and one stop.
describe('one embedded Node-RED', function () {
  const ctx = {} as E2e;
  before(async function () {
    this.timeout(60_000);
    ctx.red = await startEmbeddedRed();
  });
  after(async function () {
    await stopEmbeddedRed();
  });

  describe('example flows end to end (embedded Node-RED, simulator)', function () {
    this.timeout(20_000);
    this.slow(3_000);

    beforeEach(async function () {
      ctx.sim = new Simulator({ users: [{ ...USER }] });
      await ctx.sim.start();
    });
    afterEach(async function () {
      // an empty deploy stops the example (the error handler unregisters, lh-server logs out) before the simulator goes
      await ctx.red.deploy([]);
      await ctx.sim.stop();
    });

    emailSuite(ctx);
    chatSuite(ctx);
    stepsSuite(ctx);
    recoverySuite(ctx);
    dailySuite(ctx);
    dialogsSuite(ctx);
    auditSuite(ctx);
    limsRunSuite(ctx);
    dashboardSuite(ctx);
    labStateSuite(ctx);
    protocolsSuite(ctx);
  });

  crossSiteSuite(ctx);
});
