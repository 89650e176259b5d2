import { LhError, type LiquidHandlerClient } from '../../client';
import type { Coordinator, InstrumentCoordination } from '../../coordination/coordinator';
import type { InstrumentHome } from '../../instrument';
import { type Node, type Red } from './node-red';
import type { ServerConnection } from './server-connection';

/** What an operation node may use of its lh-server config node. */
export interface LhServerNode extends Node {
  /** Undefined when the configuration is invalid; `configError` then says why. */
  client?: LiquidHandlerClient;
  /** The instrument's reachability, one state for every node of this server (with the client; undefined without). */
  connection?: ServerConnection;
  configError?: LhError;
  /** Identifies the instrument across redeploys (its two URLs), for state that must outlive a deploy. */
  instrumentKey: string;
  /** Everything this Node-RED knows of the instrument (src/instrument), shared by its lh-server nodes. */
  home?: InstrumentHome;
  clientKey: string;
  displayName: string;
  /** Where its requests go: its stored secrets are sent nowhere else (the editor's Test connection checks it). */
  target?: ServerTarget;
  /** With an lh-coordination node: this instrument's lease (holder / standby / lost) and the shared stores. */
  coordination?: InstrumentCoordination;
  coordinator?: Coordinator;
}

/** An lh-server node's addresses and what decides which certificates it trusts, normalised for comparison. */
export interface ServerTarget {
  baseUrl: string;
  instrumentUrl: string;
  tls: string;
  simulatorCa: boolean;
}

export function isServerNode(value: unknown): value is LhServerNode {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'lh-server';
}

/** The config node an operation node points at, or a clear error when it is missing or invalid. */
export function requireClient(
  RED: Red,
  serverId: unknown,
  operation: string,
): { server: LhServerNode; client: LiquidHandlerClient } {
  const found = typeof serverId === 'string' && serverId !== '' ? RED.nodes.getNode(serverId) : undefined;
  if (!isServerNode(found)) {
    throw new LhError('no instrument configured: select an lh-server configuration node and deploy it', {
      kind: 'config',
      operation,
      field: 'server',
    });
  }
  if (!found.client) {
    throw found.configError ?? new LhError('the lh-server configuration node is not valid', { kind: 'config', operation });
  }
  return { server: found, client: found.client };
}
