import fs from 'fs';
import path from 'path';

import { LhError, type TlsOptions } from '../../client';
import { type Red } from './node-red';

interface TlsConfigNode {
  addTLSOptions(options: Record<string, unknown>): void;
}

function isTlsConfigNode(value: unknown): value is TlsConfigNode {
  return typeof value === 'object' && value !== null && typeof (value as TlsConfigNode).addTLSOptions === 'function';
}

/**
 * TLS options from a core tls-config node (CA, client certificate, verification switch); default: verify with system
 * CAs. `owner` names the node type whose TLS field it is (lh-server, lh-coordination), for the error.
 */
export function tlsOptionsFrom(RED: Red, tlsNodeId: unknown, owner: string): TlsOptions | undefined {
  if (typeof tlsNodeId !== 'string' || tlsNodeId === '') return undefined;
  const tlsNode = RED.nodes.getNode(tlsNodeId);
  if (!isTlsConfigNode(tlsNode)) {
    throw new LhError(`the TLS configuration node selected on the ${owner} node is missing or not deployed`, {
      kind: 'config',
      operation: 'configure',
      field: 'tls',
    });
  }
  const options: Record<string, unknown> = {};
  tlsNode.addTLSOptions(options);
  return tlsOptionsOf(options);
}

/**
 * Every option the tls-config node set, passed on whole (pfx, ALPNProtocols, ciphers, ... included). A PKCS#12
 * bundle (.p12/.pfx) selected as the certificate (and, as tls-config wants both, as the key) goes as `pfx`.
 */
export function tlsOptionsOf(options: Record<string, unknown>): TlsOptions {
  const out: Record<string, unknown> = { ...options, rejectUnauthorized: options.rejectUnauthorized !== false };
  if (isPkcs12(options.cert)) {
    out.pfx = options.cert;
    delete out.cert;
    if (isPkcs12(options.key)) delete out.key;
  }
  return out as TlsOptions;
}

/** A DER-encoded PKCS#12 bundle: binary (an ASN.1 SEQUENCE), not a PEM text. */
function isPkcs12(value: unknown): value is Buffer {
  return Buffer.isBuffer(value) && value.length > 0 && value[0] === 0x30 && !value.includes('-----BEGIN');
}

/** The throwaway CA of the bundled lh-simulator, for flows developed against it (never for a real instrument). */
export const SIMULATOR_CA_FILE = path.join(__dirname, '..', '..', 'simulator', 'certs', 'ca.pem');

export function simulatorTlsOptions(): TlsOptions {
  return { ca: fs.readFileSync(SIMULATOR_CA_FILE), rejectUnauthorized: true };
}
