/**
 * Review finding (the state stream): README promises that an instrument's name becomes one topic level with "`+`,
 * `#`, `/` and control characters" replaced. Only C0 controls and DEL were: a name with a C1 control character (U+0085,
 * NEL, pasted from a Windows-1252 text), a noncharacter (U+FFFF) or a lone surrogate went into the topic as it was, and
 * so did an error id the instrument lists (the event topic `lab/<name>/errors/A-<id>`). MQTT forbids these in a topic
 * (§1.5.3): mosquitto takes the publish as malformed UTF-8 and drops the mqtt out node's connection, and with it every
 * other msg on that broker node, the retained document never arriving. topicLevel now replaces them too.
 */
import assert from 'node:assert/strict';
import path from 'path';

import fc from 'fast-check';
import mqtt from 'mqtt';

import { topicLevel } from '../../src/observe/state-document';
import { coreMqttOut, mqttOutConnected, startBroker, TestBroker } from '../support/mqtt-broker';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;

const coreMqtt = require(
  path.join(path.dirname(require.resolve('@node-red/nodes/package.json')), 'core', 'network', '10-mqtt.js'),
) as (RED: unknown) => void;

/** What mosquitto (and MQTT 3.1.1 §1.5.3) refuses in a topic: malformed or forbidden UTF-8. */
function refused(c: string): boolean {
  const cp = c.codePointAt(0) ?? 0;
  return (
    cp <= 0x1f ||
    (cp >= 0x7f && cp <= 0x9f) ||
    (cp >= 0xd800 && cp <= 0xdfff) ||
    (cp >= 0xfdd0 && cp <= 0xfdef) ||
    (cp & 0xfffe) === 0xfffe
  );
}

describe('review: an instrument name or error id with characters a broker refuses in a topic', function () {
  this.timeout(30000);

  it('property: a topic level never holds a wildcard, a separator or a character a broker refuses, nor half a character', function () {
    const hostile = fc.constantFrom(
      '\u0085',
      '\u009f',
      '\u007f',
      '\uffff',
      '\ufffe',
      '\ufdd0',
      '\ud800',
      '\udfff',
      '\u{1fffe}',
      '\u{1f9ea}',
      '+',
      '#',
      '/',
      '\0',
    );
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }), hostile), {
          maxLength: 30,
        }),
        (parts) => {
          const level = topicLevel(parts.join(''));
          assert.ok(level.length >= 1 && level.length <= 64, JSON.stringify(level));
          for (const c of level) {
            assert.ok(!refused(c) && !'+#/'.includes(c), `${JSON.stringify(level)} holds U+${c.codePointAt(0)?.toString(16)}`);
          }
        },
      ),
      { numRuns: 500 },
    );
    // an astral character at the 64th unit is left out whole, never cut to a lone surrogate
    assert.equal(topicLevel(`${'a'.repeat(63)}\u{1f9ea}`), 'a'.repeat(63));
    assert.equal(topicLevel('Nimbus\u0085bay 2'), 'Nimbus_bay 2');
  });

  describe('through the core mqtt out node to a real broker', function () {
    const sim = useInstrument();
    let broker: TestBroker;
    before(async function () {
      broker = await startBroker();
    });
    after(async function () {
      await broker?.stop();
    });

    it(`the document and the error's event reach the broker [${process.env.LH_MQTT_BROKER ?? 'mosquitto if installed, else aedes'}]`, async function () {
      const server = serverFlow(sim, { withB: false, config: { name: 'Nimbus\u0085bay 2' } });
      const seen = new Map<string, Msg>();
      const watcher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      try {
        watcher.on('message', (topic, payload) => seen.set(topic, JSON.parse(payload.toString()) as Msg));
        await watcher.subscribeAsync('lab/#', { qos: 1 });
        await helper.load(
          [...packageNodes(), tlsConfigNode, coreMqtt],
          [
            ...server.nodes,
            { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.3, wires: [[], [], []] },
            { id: 'state', type: 'lh-state', server: 'server', machineInterval: '0', wires: [['out'], ['out']] },
            ...coreMqttOut(broker),
          ],
          server.credentials,
        );
        // the core mqtt out node drops a msg sent before its broker node has connected: the error is listed after
        await mqttOutConnected(helper.getNode('broker'));
        const error = sim.injectPendingError({ id: 'e\uffff1', severity: 'Error', title: 'Clot' });
        const end = Date.now() + 15_000;
        const docTopic = 'lab/Nimbus_bay 2/state';
        const eventTopic = 'lab/Nimbus_bay 2/errors/A-e_1';
        while (Date.now() < end && !(seen.has(eventTopic) && (seen.get(docTopic)?.errors as Msg | undefined)?.pending === 1)) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.deepEqual([...seen.keys()].sort(), [eventTopic, docTopic].sort());
        assert.equal(seen.get(docTopic)?.instrument, 'Nimbus\u0085bay 2', 'the document names the instrument as it is named');
        assert.equal(seen.get(eventTopic)?.id, error.id, 'the event names the error by its id as listed');
      } finally {
        await watcher.endAsync();
      }
    });
  });
});
