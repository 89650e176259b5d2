/**
 * Operation nodes fired one at a time in a loaded flow, for tests of what a user's flow gets: the msg out of the
 * node, or the msg a Catch node passed on. The flow wires the node's output to a helper node `out` and a Catch node
 * to a helper node `caught` (settingsReadNodes makes such a flow of lh-settings reads).
 */
import assert from 'node:assert/strict';

import { helper, nextMessage } from './runtime';

type Msg = Record<string, unknown>;

/** Fires the node `id` with `msg`; resolves with its msg out (ok) or the msg the Catch node got. */
export async function fireThrough(id: string, msg: Msg = {}): Promise<{ ok: boolean; msg: Msg }> {
  const out = nextMessage(helper.getNode('out')).then((m) => ({ ok: true, msg: m }));
  const caught = nextMessage(helper.getNode('caught')).then((m) => ({ ok: false, msg: m }));
  helper.getNode(id).receive(msg);
  const result = await Promise.race([out, caught]);
  helper.getNode('out').removeAllListeners('input');
  helper.getNode('caught').removeAllListeners('input');
  return result;
}

/** An lh-settings read `id` of the lh-server node `server` wired to `out`, with the Catch node and the two helpers. */
export function settingsReadNodes(server = 'server', id = 'get'): Msg[] {
  return [
    { id, type: 'lh-settings', server, operation: 'get-software-settings', wires: [['out']] },
    { id: 'catcher', type: 'catch', wires: [['caught']] },
    { id: 'out', type: 'helper' },
    { id: 'caught', type: 'helper' },
  ];
}

/** Someone at the instrument typed a wrong password for `username` three times: a user locked out at three. */
export async function lockOutAtInstrument(baseUrl: string, username: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${baseUrl}/api/v1/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: 'typo' }),
    });
    assert.ok(res.status >= 400);
  }
}
