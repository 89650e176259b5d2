/**
 * Loopback websocket servers for client tests of the event sockets, and the clients under test, all closed after each
 * test of the describe block.
 */
import * as http from 'node:http';
import type * as https from 'node:https';
import type { AddressInfo } from 'node:net';

import { WebSocketServer } from 'ws';

import type { LiquidHandlerClient } from '../../src/client';

/** Closes a websocket server and the HTTP(S) server under it, ending its connections. */
export async function closeWsServer(server: http.Server | https.Server, wss: WebSocketServer): Promise<void> {
  for (const ws of wss.clients) ws.terminate();
  wss.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export interface WsServers {
  /** clients to close after the test */
  open: LiquidHandlerClient[];
  /** A websocket server on a loopback port (plain HTTP): its URL (http://127.0.0.1:port) and the server. */
  listen(autoPong?: boolean): Promise<{ url: string; wss: WebSocketServer }>;
}

/** Registers an afterEach() that closes the clients in `open` and every server listen() started. */
export function useWsServers(): WsServers {
  const servers: { server: http.Server; wss: WebSocketServer }[] = [];
  const open: LiquidHandlerClient[] = [];
  afterEach(async function () {
    await Promise.all(open.splice(0).map((c) => c.close()));
    for (const { server, wss } of servers.splice(0)) await closeWsServer(server, wss);
  });
  return {
    open,
    async listen(autoPong = true) {
      const server = http.createServer();
      const wss = new WebSocketServer({ server, autoPong });
      servers.push({ server, wss });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, wss };
    },
  };
}
