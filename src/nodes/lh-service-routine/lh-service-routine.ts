import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { resolveFlag, resolveOperation, resolveSetting } from '../shared/typed-inputs';
import { listRoutines, ROUTINE_OPERATIONS, routineOperation, updateRoutine } from './operations';

/** A checkbox: ticked means true; unticked takes `msg[name]` (a boolean) when present, else false. */
function flag(config: unknown, msg: NodeMessage, name: string, op: string): boolean {
  return resolveFlag(config, msg, name, op) ?? false;
}

export = function register(RED: Red): void {
  function LhServiceRoutine(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    runOperationNode(RED, node, config, async ({ client, msg }) => {
      const operation = routineOperation(resolveOperation(msg, config.operation, ROUTINE_OPERATIONS, 'lh-service-routine'));
      const routineId = (): Promise<unknown> =>
        resolveSetting(RED, node, msg, 'routineId', config.routineId, config.routineIdType);
      switch (operation) {
        case 'list': {
          const routines = await listRoutines(
            client.prep,
            flag(config.recommendedOnly, msg, 'recommendedOnly', 'list-service-routines'),
          );
          return { payload: routines, status: { key: 'count', subs: { count: routines.length } } };
        }
        case 'get':
          return { payload: await client.prep.getServiceRoutine(await routineId()), status: { key: 'done' } };
        case 'update': {
          const markRunNow = flag(config.markRunNow, msg, 'markRunNow', 'update-service-routine');
          const update = { routineId: await routineId(), payload: msg.payload, markRunNow };
          const routine = await updateRoutine(client.baseUrl, client.prep, update);
          return { payload: routine, status: { key: 'saved' } };
        }
      }
    });
  }
  RED.nodes.registerType('lh-service-routine', LhServiceRoutine);
};
