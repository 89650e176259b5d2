/** lh-error-poll: wiring only (issue 30 point 3); the node's behaviour is ErrorWatch (error-watch.ts). */
import { asLhError, LhError } from '../../client';
import { instrumentInfo } from '../shared/error-records';
import { migrateConfig } from '../shared/migrations';
import { logError, logInfo } from '../shared/node-log';
import { asNode, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { requireClient } from '../shared/server-node';
import { Status } from '../shared/status';
import { ErrorWatch, type Watcher } from './error-watch';
import { sourcesOf } from './poll-decisions';
import { rememberTurnedOn } from './remember-migrated';
import { watchFor } from './seen-errors';

export = function register(RED: Red): void {
  function LhErrorPoll(this: unknown, config: NodeConfig): void {
    const turnedOn = rememberTurnedOn(config);
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    if (turnedOn) logInfo(node, RED._('lh-error-poll.log.rememberMigrated'));
    const status = new Status(node, RED);
    const sources = sourcesOf(config.source);

    let setupError: LhError | undefined;
    let watcher: Watcher | undefined;
    try {
      const { server, client } = requireClient(RED, config.server, node.type);
      if (sources.includes('B') && !client.hasInstrumentInterface) {
        throw new LhError(RED._('lh-error-poll.errors.noInstrumentUrl'), {
          kind: 'config',
          operation: node.type,
          field: 'source',
        });
      }
      const watch = watchFor(server.instrumentKey, node.id);
      watcher = { node, status, client, server, instrument: instrumentInfo(server, client), watch, sources, config };
    } catch (err) {
      setupError = asLhError(err, node.type);
      status.failed(setupError);
      logError(node, setupError.message);
    }

    const watch = watcher ? new ErrorWatch(RED, watcher) : undefined;

    node.on('input', (_msg: NodeMessage, _send: unknown, done: (err?: Error) => void) => {
      if (!watch) return done(setupError);
      watch.trigger();
      done();
    });

    node.on('close', (removed: boolean, done: () => void) => {
      if (watch) watch.close(removed, done);
      else done();
    });
  }

  RED.nodes.registerType('lh-error-poll', LhErrorPoll);
};
