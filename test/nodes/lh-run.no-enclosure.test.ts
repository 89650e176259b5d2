/**
 * Issue 17 point 2 (review 2). Review finding: sensor-status tells isEnclosurePresent beside isDoorClosed; startBlockers() ignores the enclosure,
 * so a workstation without an enclosure (no door: its door sensor cannot read "closed") is refused every start with
 * "the door is open".
 */
import assert from 'node:assert/strict';

import { useRunNode } from './lh-run.support';

describe('lh-run start on an instrument without an enclosure (issue 17 point 2, review 2)', function () {
  const { sim, run } = useRunNode();

  it('is not refused for an open door when there is no enclosure (and so no door)', async function () {
    sim.configureMachine({ isEnclosurePresent: false, isDoorClosed: false });
    // run() ends with the msg on the output, or rejects at once naming a refusal at the Catch node: no timer decides
    // (a 4 s one took a slow start for a refusal)
    const msg = await run({ operation: 'start', protocolId: '1', simulate: 'true' }, {});
    assert.equal(msg.outcome, 'started');
  });
});
