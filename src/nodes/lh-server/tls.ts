import fs from 'fs';
import path from 'path';
import { LhError, TlsOptions } from '../../client';
import { Red } from '../shared/node-red';

interface TlsConfigNode {
  addTLSOptions(options: Record<string, unknown>): void;
}

function isTlsConfigNode(value: unknown): value is TlsConfigNode {
  return typeof value === 'object' && value !== null && typeof (value as TlsConfigNode).addTLSOptions === 'function';
}

/** TLS options from a core tls-config node (CA, client certificate, verification switch); default: verify with system CAs. */
export function tlsOptionsFrom(RED: Red, tlsNodeId: unknown): TlsOptions | undefined {
  if (typeof tlsNodeId !== 'string' || tlsNodeId === '') return undefined;
  const tlsNode = RED.nodes.getNode(tlsNodeId);
  if (!isTlsConfigNode(tlsNode)) {
    throw new LhError('the TLS configuration node selected on the lh-server node is missing or not deployed', {
      kind: 'config',
      operation: 'configure',
      field: 'tls',
    });
  }
  const options: Record<string, unknown> = {};
  tlsNode.addTLSOptions(options);
  return {
    ca: options.ca as TlsOptions['ca'],
    cert: options.cert as TlsOptions['cert'],
    key: options.key as TlsOptions['key'],
    passphrase: options.passphrase as string | undefined,
    servername: options.servername as string | undefined,
    rejectUnauthorized: options.rejectUnauthorized !== false,
  };
}

/** The throwaway CA of the bundled lh-simulator, for flows developed against it (never for a real instrument). */
export const SIMULATOR_CA_FILE = path.join(__dirname, '..', '..', 'simulator', 'certs', 'ca.pem');

export function simulatorTlsOptions(): TlsOptions {
  return { ca: fs.readFileSync(SIMULATOR_CA_FILE), rejectUnauthorized: true };
}
