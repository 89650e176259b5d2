import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

describe('lh-error-poll: the password is about to expire', function () {
  const sim = useInstrument({ simulator: { policy: { passwordExpires: 3, passwordExpiresNotification: 14 } } });

  it('sends one msg on the connection output (event "password-expiry", days left, no secret) ', async function () {
    const server = serverFlow(sim, { withB: false });
    const flow = [
      ...server.nodes,
      { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [[], [], ['conn']] },
      { id: 'conn', type: 'helper' },
    ];
    await loadFlow(flow, server.credentials);
    const got: Msg[] = [];
    helper.getNode('conn').on('input', (msg: Msg) => got.push(msg));
    await until(() => got.some((m) => m.event === 'password-expiry'), 'password-expiry msg');
    const msg = got.find((m) => m.event === 'password-expiry') as Msg;
    const payload = msg.payload as Msg;
    assert.equal(payload.daysLeft, 3);
    assert.equal(payload.user, 'admin');
    assert.match(String(msg.topic), /the password of user "admin" expires in 3 days/);
    assert.ok(!JSON.stringify(msg).includes('labwire'), 'no password in the msg');
  });
});
