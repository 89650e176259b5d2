/**
 * review43: a shortcut (msg.selectedActionId set by a flow or a person's chat reply) into lh-submit-recovery sends
 * only what the error offers. A recovery solution is an action the error marks `isRecovery: true`; interface B
 * (interfaces.md 4.5) does not say what an instrument does with a "recovery" naming an action that is not one (the
 * simulator's "Abort the run", id 4), so the package must not send it. Before this review:
 * - with the error in msg.payload, kind "recovery" and action 4 went out as a recovery (selectedActionIsRecovery
 *   false), to be refused, or not, by the instrument;
 * - with msg.uuid alone, the node reads the error list before sending (the uuid's spelling) but checked nothing
 *   against it: any action id (99, or 4 as a recovery) went out.
 * Over every (action, kind, path), the node sends exactly when the error offers that action for that kind, and
 * otherwise fails naming selectedActionId, with nothing sent.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { LoadedNode, loadNode, useInstrument } from '../support/node-suite';
import { recoverySubmissions } from '../support/sim-requests';

type Msg = Record<string, unknown>;

describe('review: lh-submit-recovery sends only an action the error offers for the kind', function () {
  this.timeout(60000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let submit: LoadedNode;

  const submissions = (): { path: string; body: unknown }[] => recoverySubmissions(sim);

  beforeEach(async function () {
    sim.state.handlers.add('nodered1');
    submit = await loadNode(sim, { id: 'submit', type: 'lh-submit-recovery', kind: 'msg' }, { server: { withB: true } });
  });

  for (const path of ['msg.payload', 'msg.uuid alone'] as const)
    for (const kind of ['recovery', 'action'] as const)
      it(`${path}, ${kind}: every action of the error and one it does not offer`, async function () {
        for (const actionId of [1, 3, 4, 99]) {
          const error = sim.injectInstrumentError() as unknown as Msg;
          const actions = error.actions as { id: number; isRecovery: boolean }[];
          const action = actions.find((a) => a.id === actionId);
          const offered = action !== undefined && (kind === 'action' || action.isRecovery);
          const msg: Msg =
            path === 'msg.payload'
              ? { payload: error, kind, selectedActionId: actionId }
              : { payload: 'reply', uuid: error.uuid, kind, selectedActionId: actionId };
          const before = submissions().length;
          const what = `${path}, ${kind} ${actionId}`;
          if (offered) {
            const out = await submit.run(msg);
            assert.equal(out.outcome, 'answered', what);
            assert.equal(submissions().length, before + 1, what);
          } else {
            const failed = await submit.runFailing(msg);
            const details = failed._error as Msg;
            assert.equal(details.field, 'selectedActionId', `${what}: ${String(details.message)}`);
            assert.match(String(details.message), action ? /recovery solutions/ : /actions error/, what);
            assert.equal(submissions().length, before, `${what}: nothing sent`);
          }
        }
      });
});
