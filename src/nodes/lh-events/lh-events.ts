import { asLhError, codeMatches, type EventStateChange } from '../../client';
import { instrumentInfo } from '../shared/error-records';
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { requireClient } from '../shared/server-node';
import { Status } from '../shared/status';
import { connectionMessage, eventMessage, parseCodes } from './event-messages';

export = function register(RED: Red): void {
  function LhEvents(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    const status = new Status(node, RED);
    const wanted = parseCodes(config.codes);
    const unsubscribe: (() => void)[] = [];
    try {
      const { server, client } = requireClient(RED, config.server, node.type);
      const instrument = instrumentInfo(server, client);
      const onChange = (change: EventStateChange): void => {
        if (change.channel !== 'events') return;
        if (change.state === 'connected') status.ok('lh-events.status.connected');
        else if (change.state === 'disconnected') status.warn('lh-events.status.disconnected');
        else status.idle('lh-events.status.unavailable');
        node.send([null, connectionMessage(change, instrument)]);
      };
      status.idle('lh-events.status.connecting');
      status.follow(server.connection);
      unsubscribe.push(client.events.onState(onChange));
      unsubscribe.push(
        client.events.onEvents((event) => {
          if (!codeMatches(event.code, wanted)) return;
          status.ok('lh-events.status.event', { code: event.code || '?' });
          node.send([eventMessage(event, instrument), null]);
        }),
      );
      // another node may already hold the socket open: say where it stands now
      const current = client.events.lastChange('events');
      if (current) onChange(current);
    } catch (err) {
      const error = asLhError(err, node.type);
      status.failed(error);
      node.error(error.message);
    }

    node.on('close', (_removed: boolean, done: () => void) => {
      for (const off of unsubscribe.splice(0)) off();
      done();
    });
  }

  RED.nodes.registerType('lh-events', LhEvents);
};
