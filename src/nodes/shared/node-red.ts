// The boundary with the Node-RED runtime, typed by @types/node-red; these names are the ones the nodes import.
import type { Request, Response } from 'express';
import type {
  Node as RedNode,
  NodeAPI,
  NodeContext,
  NodeContextData,
  NodeDef,
  NodeMessage as RedMessage,
  NodeStatus as RedStatus,
} from 'node-red';

export type NodeMessage = RedMessage;
export type NodeStatus = RedStatus;

/** What the runtime passes to `send` in an input handler: one msg, or one entry (msg, msgs or null) per output. */
export type SendFn = (msg: NodeMessage | (NodeMessage | NodeMessage[] | null)[]) => void;
export type DoneFn = (err?: Error) => void;

/**
 * A node's saved configuration: the runtime's fields plus the node's own properties, read as unknown and checked.
 * Not NodeDef, which declares `name` and `z` always present: config nodes have no `z`, and a flow written by hand
 * or by an older version may lack `name`.
 */
export type NodeConfig = Omit<NodeDef, 'name' | 'z'> & { name?: string; z?: string; [property: string]: unknown };

/** A node of this package: credentials are texts (the config node's username, password, token). */
export type Node = RedNode<Record<string, string | undefined>>;

export type ContextStore = NodeContextData;
export type NodeContextStores = NodeContext;

/**
 * The runtime API a node module receives. Four members are declared more exactly than @types/node-red does:
 * `createNode` is called with the constructor's `this`, which is not a Node until that call made it one;
 * `getNode` returns null for an unknown id (declared as always a Node); credentials are texts (declared `object`);
 * and `_` takes any substitution values (declared strings and numbers, the runtime formats the rest).
 */
export type Red = Omit<NodeAPI, 'nodes' | '_'> & {
  nodes: Omit<NodeAPI['nodes'], 'createNode' | 'getNode' | 'getCredentials' | 'registerType'> & {
    createNode(node: unknown, config: NodeConfig): void;
    getNode(id: string): unknown;
    getCredentials(id: string): Record<string, string | undefined> | undefined;
    registerType(
      type: string,
      constructor: (this: unknown, config: NodeConfig) => void,
      options?: { credentials?: Record<string, { type: 'text' | 'password' }> },
    ): void;
  };
  _: (key: string, substitutions?: Record<string, unknown>) => string;
};

/** An editor admin endpoint's request: route params, query and a JSON body that is only trusted once checked. */
export type AdminRequest = Request<Record<string, string>, unknown, unknown>;
export type AdminResponse = Response;

/** Narrow the runtime's `this` in a node constructor. */
export function asNode(self: unknown): Node {
  return self as Node;
}
