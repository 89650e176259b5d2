/**
 * A proxy in front of the simulator that holds its camera requests, unanswered, while `hold` is set: a deck photo
 * that does not come, so a raised msg waits (up to 2 s) for it. Everything else passes through. Mocha hooks: the
 * proxy listens before the suite, each test ends with the held requests destroyed and `hold` set again.
 */
import http from 'http';

import type { Simulator } from '../../src/simulator';
import { closeLocal, listenLocal } from './local-server';

export interface HeldCamera {
  /** the proxy's address: an lh-server's base URL (the simulator's path prefix included) */
  readonly url: string;
  /** camera requests are held while true; set false to let the next ones through */
  hold: boolean;
  /** the camera requests held so far in this test */
  readonly held: http.ServerResponse[];
}

export function useHeldCamera(sim: Simulator): HeldCamera {
  const camera = { url: '', hold: true, held: [] as http.ServerResponse[] };
  let proxy: http.Server;
  before(async function () {
    proxy = http.createServer((req, res) => {
      if (camera.hold && req.url?.includes('/api/v1/camera/')) return void camera.held.push(res);
      const upstream = http.request(`${sim.baseUrl}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    camera.url = await listenLocal(proxy);
  });
  afterEach(function () {
    for (const res of camera.held.splice(0)) res.destroy();
    camera.hold = true;
  });
  after(async function () {
    await closeLocal(proxy);
  });
  return camera;
}
