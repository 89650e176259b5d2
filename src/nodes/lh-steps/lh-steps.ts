import { validate as v, validationError } from '../../client';
import { migrateConfig } from '../shared/migrations';
import { asNode, type Node, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { renderSetting, resolveChoice, resolveFlag, resolveOperation, resolveSetting } from '../shared/typed-inputs';
import { runStepOperation, STEP_OPERATIONS, type StepOperation, stepOperation, type StepRequest } from './operations';

/** The operation names the client reports in msg.error.operation. */
const CLIENT_OPERATION: Record<StepOperation, string> = {
  create: 'create-step',
  update: 'update-step',
  list: 'list-steps',
  get: 'get-step',
  reorder: 'reorder-steps',
  rename: 'rename-step',
  enable: 'enable-step',
  disable: 'disable-step',
  delete: 'delete-step',
};

const WITH_STEP_ID: ReadonlySet<StepOperation> = new Set(['update', 'get', 'rename', 'enable', 'disable', 'delete']);

const flag = resolveFlag;

/** A text setting that may hold a mustache template; empty means "not set". */
function text(value: unknown, msg: NodeMessage, name: string, op: string): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return value.includes('{{') ? renderSetting(value, msg, name, op) : value;
}

/** create/update body: msg.payload, with the step type and name of the dialog filled in (the dialog wins). */
function stepBody(config: NodeConfig, msg: NodeMessage, op: string): Record<string, unknown> {
  const body = { ...v.plainObject(msg.payload, 'payload', op) };
  const stepType = text(config.stepType, msg, 'stepType', op);
  const name = text(config.stepName, msg, 'stepName', op);
  if (stepType !== undefined) body.stepType = stepType;
  if (name !== undefined) body.name = name;
  return body;
}

/** update: the step id of the dialog (or msg.stepId) goes into the body; a different payload.id is an error. */
function withStepId(body: Record<string, unknown>, stepId: unknown): Record<string, unknown> {
  if (stepId === undefined || stepId === null || stepId === '') return body;
  const op = 'update-step';
  const id = v.databaseId(stepId, 'stepId', op);
  if (body.id !== undefined && v.databaseId(body.id, 'payload.id', op) !== id) {
    throw validationError(op, 'stepId', `(${id}) differs from payload.id (${String(body.id)}); give the step id in one place`);
  }
  return { ...body, id };
}

async function stepRequest(RED: Red, node: Node, config: NodeConfig, msg: NodeMessage): Promise<StepRequest> {
  const operation = stepOperation(resolveOperation(msg, config.operation, STEP_OPERATIONS, 'lh-steps'));
  const op = CLIENT_OPERATION[operation];
  const setting = (name: string): Promise<unknown> => resolveSetting(RED, node, msg, name, config[name], config[`${name}Type`]);
  const request: StepRequest = { operation, protocolId: await setting('protocolId') };
  if (WITH_STEP_ID.has(operation)) request.stepId = await setting('stepId');
  const choice = (name: string): boolean | undefined => v.optionalBoolean(resolveChoice(msg, name, config[name]), name, op);
  if (operation !== 'delete' && operation !== 'create')
    request.includeCustomLiquidSettings = choice('includeCustomLiquidSettings');
  if (operation === 'list' || operation === 'reorder') request.includeFullStepData = choice('includeFullStepData');
  switch (operation) {
    case 'create':
      request.payload = stepBody(config, msg, op);
      request.makeNameUnique = flag(config.makeNameUnique, msg, 'makeNameUnique', op);
      break;
    case 'update':
      request.payload = withStepId(stepBody(config, msg, op), request.stepId);
      request.makeNameUnique = flag(config.makeNameUnique, msg, 'makeNameUnique', op);
      break;
    case 'list':
      request.offset = v.optionalInt32(await setting('offset'), 'offset', op, 0);
      request.limit = v.optionalInt32(await setting('limit'), 'limit', op, 1);
      request.allPages = flag(config.allPages, msg, 'allPages', op) ?? false;
      break;
    default:
      request.payload = msg.payload;
  }
  return request;
}

export = function register(RED: Red): void {
  function LhSteps(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    runOperationNode(RED, node, config, async ({ client, msg }) => {
      const request = await stepRequest(RED, node, config, msg);
      return runStepOperation(client.prep, request);
    });
  }
  RED.nodes.registerType('lh-steps', LhSteps);
};
