import { type AuditRedis } from '../../audit';
import { coordinationSettings } from '../../coordination/config';
import { connectRedis, type CoordinationRedis, evictionWarning } from '../../coordination/connect';
import { Coordinator } from '../../coordination/coordinator';
import { redisAuditReleased } from '../../instrument';
import { type LhCoordinationNode } from '../shared/coordination-node';
import { migrateConfig } from '../shared/migrations';
import { logError, logInfo, logWarn } from '../shared/node-log';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { forgetSecrets, rememberSecrets } from '../shared/redaction';
import { tlsOptionsFrom } from '../shared/tls-config';

/** How long a close waits for the lh-server nodes' audit records on this connection before it closes it. */
const AUDIT_CLOSE_MS = 8000;

/**
 * Redis errors said once per kind until the connection is back (a down Redis would otherwise log every 100 ms). A kind
 * is the text with its numbers set aside: ioredis puts the retry delay in some ("All sentinels are unreachable.
 * Retrying from scratch after 10ms", 20ms, … 1000ms), which would otherwise be a hundred kinds of one error.
 */
function connectionLog(node: LhCoordinationNode): { error(err: Error): void; ready(): void } {
  const said = new Set<string>();
  let down = false;
  return {
    error(err) {
      down = true;
      const kind = err.message.replace(/\d+/g, '#');
      if (said.has(kind)) return;
      said.add(kind);
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
    const remembered = rememberSecrets(node.id, [credentials.password]);
    let redis: CoordinationRedis | undefined;
    try {
      const settings = coordinationSettings(config);
      redis = connectRedis(
        settings,
        { username: credentials.username, password: credentials.password },
        tlsOptionsFrom(RED, config.tls, 'lh-coordination'),
      );
      const log = connectionLog(node);
      redis.on('error', (err: Error) => log.error(err));
      redis.on('ready', () => log.ready());
      // a Redis that evicts keys when full drops the replicas' with the others: said once per connection made
      const connected = redis;
      redis.once('ready', () => {
        connected.info('memory').then(
          (info) => {
            const warning = evictionWarning(String(info));
            if (warning) logWarn(node, warning);
          },
          () => undefined, // INFO refused: nothing to say
        );
      });
      node.coordinator = new Coordinator({ redis, prefix: settings.prefix, leaseMs: settings.leaseMs });
    } catch (err) {
      node.configError = err instanceof Error ? err : new Error(String(err));
      logError(node, node.configError.message);
    }

    node.on('close', (_removed: boolean, done: () => void) => {
      const coordinator = node.coordinator;
      node.coordinator = undefined;
      const quit = (): void => {
        // the audit chains on this connection write their last records first (bounded: a stuck close never hangs a deploy)
        const timer = setTimeout(disconnect, AUDIT_CLOSE_MS);
        void (redis ? redisAuditReleased(redis as unknown as AuditRedis) : Promise.resolve()).then(disconnect);
        function disconnect(): void {
          clearTimeout(timer);
          if (finished) return;
          finished = true;
          redis?.disconnect();
          // known to the redaction step until the connection is closed (what it says while closing is redacted)
          forgetSecrets(node.id, remembered);
          done();
        }
      };
      let finished = false;
      if (!coordinator) return quit();
      coordinator.close().then(quit, quit);
    });
  }

  RED.nodes.registerType('lh-coordination', LhCoordination, {
    credentials: { username: { type: 'text' }, password: { type: 'password' } },
  });
};
