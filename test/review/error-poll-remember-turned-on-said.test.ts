/**
 * Hostile review (first hour, upgrade from 0.3.3): an lh-error-poll saved by 0.3 with *Remember* off (the dialog's
 * default then) is migrated to Remember on (issue 32), which changes what a restart does: pending errors are no longer
 * reported again. Nothing said so: not the log at start, not the dialog, which simply showed the box ticked. The node
 * now logs one line at start, and the dialog a note beside the box, until the node is saved again.
 */
import assert from 'node:assert/strict';

import { rememberTurnedOn } from '../../src/nodes/lh-error-poll/remember-migrated';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: an lh-error-poll whose Remember the upgrade turned on says so', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it('turned on: saved before version 3 with it off or without it; not when on, nor when saved at version 3', function () {
    assert.equal(rememberTurnedOn({ type: 'lh-error-poll', version: 2, persist: false }), true, '0.3 flow, the old default');
    assert.equal(rememberTurnedOn({ type: 'lh-error-poll', version: '2', persist: 'false' }), true);
    assert.equal(rememberTurnedOn({ type: 'lh-error-poll' }), true, 'a 0.1 or hand-written flow (off by default then)');
    assert.equal(rememberTurnedOn({ type: 'lh-error-poll', version: 2, persist: true }), false, 'on already');
    assert.equal(rememberTurnedOn({ type: 'lh-error-poll', version: 3, persist: false }), false, 'the user’s choice');
  });

  /** The info lines the runtime logged for the lh-error-poll `id` (the test runtime logs a catalogue's key). */
  function infoLines(id: string): string[] {
    const log = helper.log() as unknown as { args: [Msg][] };
    return log.args
      .map(([entry]) => entry)
      .filter((entry) => entry.id === id && entry.level === 40)
      .map((entry) => String(entry.msg));
  }

  it('a node saved by 0.3 with Remember off: one line at start naming Remember; a node saved at 3: none', async function () {
    const server = serverFlow(sim, { withB: false });
    const poll = {
      type: 'lh-error-poll',
      server: 'server',
      source: 'A',
      interval: 60,
      offlineAfter: 3,
      listen: false,
      wires: [[], [], []],
    };
    await helper.load(
      [tlsConfigNode, ...packageNodes()],
      [
        ...server.nodes,
        { ...poll, id: 'old', version: 2, persist: false, store: '' },
        { ...poll, id: 'new', version: 3, persist: false, store: '', snapshot: false },
      ],
      server.credentials,
    );
    assert.deepEqual(infoLines('old'), ['lh-error-poll.log.rememberMigrated']);
    assert.deepEqual(infoLines('new'), []);
    const catalogue = require('../../nodes/nodes/lh-error-poll/locales/en-US/lh-error-poll.json') as Record<
      string,
      { log: Record<string, string>; migrated: Record<string, string> }
    >;
    for (const said of [catalogue['lh-error-poll'].log.rememberMigrated, catalogue['lh-error-poll'].migrated.persist])
      assert.match(said, /^Remember is on since 0\.4: .*saved by an older version with it off.*untick Remember/);
  });
});
