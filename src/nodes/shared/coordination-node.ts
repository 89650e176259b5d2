import { type Coordinator } from '../../coordination/coordinator';
import { type Node } from './node-red';

/** What lh-server nodes use of an lh-coordination config node. */
export interface LhCoordinationNode extends Node {
  /** undefined when the configuration is invalid; `configError` then says why */
  coordinator?: Coordinator;
  configError?: Error;
}

export function isCoordinationNode(value: unknown): value is LhCoordinationNode {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'lh-coordination';
}
