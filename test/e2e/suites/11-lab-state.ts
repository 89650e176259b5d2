import assert from 'node:assert/strict';

import mqtt from 'mqtt';

import { until } from '../../support/embedded-red';
import { startBroker, TestBroker } from '../../support/mqtt-broker';
import { debugValue, E2e, exampleFlow } from './common';

export function labStateSuite(ctx: E2e): void {
  describe('11 Lab state to MQTT', function () {
    let broker: TestBroker;
    before(async function () {
      broker = await startBroker();
    });
    after(async function () {
      await broker?.stop();
    });

    it("an error raised on the simulator is in the instrument's retained state document at the broker the tab's env names", async function () {
      const { flow, credentials } = exampleFlow('11 ', ctx.sim);
      const tab = flow.find((n) => n.type === 'tab') as unknown as { env: { name: string; value: string }[] };
      tab.env = tab.env.map((e) => (e.name === 'LH_MQTT_PORT' ? { ...e, value: String(broker.port) } : e));
      const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      try {
        const pending = new Promise<{ errors: { pending: number; mostSevere: { title: string } } }>((resolve) =>
          client.on('message', (_topic, payload) => {
            const doc = JSON.parse(payload.toString()) as { errors: { pending: number; mostSevere: { title: string } } };
            if (doc.errors.pending === 1) resolve(doc);
          }),
        );
        await client.subscribeAsync('lab/+/state', { qos: 1 });
        const shown = ctx.red.nextDebug('lh-ex11-doc', (m) => debugValue(m) !== undefined);
        const mqttOut = ctx.red.collectStatus('lh-ex11-mqtt');
        await ctx.red.deploy(flow, credentials);
        await shown;
        // the core mqtt out node drops a msg sent before its broker node has connected, and the state node sends its
        // document again only 2 s after the deploy and then every minute: the error is raised once it has connected
        await until('the mqtt out node connected', () => mqttOut.includes('node-red:common.status.connected'), 15_000);
        ctx.sim.injectPendingError({ severity: 'Error', title: 'Liquid level not detected' });
        const doc = await pending;
        assert.equal(doc.errors.mostSevere.title, 'Liquid level not detected');
      } finally {
        await client.endAsync();
      }
    });
  });
}
