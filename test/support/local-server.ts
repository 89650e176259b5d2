import http from 'http';
import { AddressInfo } from 'net';

/** Listens on 127.0.0.1, on a port the system picks; resolves with the server's http:// URL. */
export async function listenLocal(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Ends the server's connections (keep-alive ones too, or close would wait for them) and closes it. */
export async function closeLocal(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
