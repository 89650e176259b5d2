import type { ConnectionOptions } from 'tls';
import { coordinationSettings } from '../../coordination/config';
import { connectRedis, CoordinationRedis } from '../../coordination/connect';
import { Coordinator } from '../../coordination/coordinator';
import { LhError } from '../../client';
import { asNode, NodeConfig, Red } from '../shared/node-red';
import { logError, logInfo, logWarn } from '../shared/node-log';
import { migrateConfig } from '../shared/migrations';
import { forgetSecrets, rememberSecrets } from '../shared/secrets';
import { LhCoordinationNode } from '../shared/coordination-node';

interface TlsConfigNode {
  addTLSOptions(options: Record<string, unknown>): void;
}

function tlsFrom(RED: Red, id: unknown): ConnectionOptions | undefined {
  if (typeof id !== 'string' || id === '') return undefined;
  const found = RED.nodes.getNode(id) as Partial<TlsConfigNode> | null;
  if (!found || typeof found.addTLSOptions !== 'function') {
    throw new LhError('the TLS configuration node selected on the lh-coordination node is missing or not deployed', {
      kind: 'config',
      operation: 'configure',
      field: 'tls',
    });
  }
  const options: Record<string, unknown> = {};
  found.addTLSOptions(options);
  return { ...options, rejectUnauthorized: options.rejectUnauthorized !== false } as ConnectionOptions;
}

/** Redis error texts said once each until the connection is back (a down Redis would otherwise log every 100 ms). */
function connectionLog(node: LhCoordinationNode): { error(err: Error): void; ready(): void } {
  const said = new Set<string>();
  let down = false;
  return {
    error(err) {
      down = true;
      if (said.has(err.message)) return;
      said.add(err.message);
      logWarn(node, `coordination Redis: ${err.message}: no automatic answers from this Node-RED until it is back`);
    },
    ready() {
      if (down) logInfo(node, 'coordination Redis reachable again');
      down = false;
      said.clear();
    },
  };
}

export = function register(RED: Red): void {
  function LhCoordination(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this) as LhCoordinationNode;
    const credentials = node.credentials ?? {};
    rememberSecrets(node.id, [credentials.password]);
    let redis: CoordinationRedis | undefined;
    try {
      const settings = coordinationSettings(config);
      redis = connectRedis(settings, { username: credentials.username, password: credentials.password }, tlsFrom(RED, config.tls));
      const log = connectionLog(node);
      redis.on('error', (err: Error) => log.error(err));
      redis.on('ready', () => log.ready());
      node.coordinator = new Coordinator({ redis, prefix: settings.prefix, leaseMs: settings.leaseMs });
    } catch (err) {
      node.configError = err instanceof Error ? err : new Error(String(err));
      logError(node, node.configError.message);
    }

    node.on('close', (_removed: boolean, done: () => void) => {
      forgetSecrets(node.id);
      const coordinator = node.coordinator;
      node.coordinator = undefined;
      const quit = (): void => {
        redis?.disconnect();
        done();
      };
      if (!coordinator) return quit();
      coordinator.close().then(quit, quit);
    });
  }

  RED.nodes.registerType('lh-coordination', LhCoordination, {
    credentials: { username: { type: 'text' }, password: { type: 'password' } },
  });
};
