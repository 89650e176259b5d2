/**
 * A proxy in front of the simulator that holds its camera requests, unanswered, while `hold` is set: a deck photo
 * that does not come, so a raised msg waits (up to 2 s) for it. Everything else passes through.
 */
import http from 'http';

import type { Simulator } from '../../src/simulator';
import { closeLocal, listenLocal } from './local-server';

export interface HeldCamera {
  /** the proxy's address: an lh-server's base URL (the simulator's path prefix included) */
  readonly url: string;
  /** camera requests are held while true; set false to let the next ones through */
  hold: boolean;
  /** the camera requests held so far */
  readonly held: http.ServerResponse[];
}

/** A started proxy: `release()` ends the held requests and holds again; `close()` stops it. */
export interface HeldCameraProxy extends HeldCamera {
  release(): void;
  close(): Promise<void>;
}

/** A proxy to `baseUrl` (a simulator's), listening on loopback. */
export async function startHeldCamera(baseUrl: string): Promise<HeldCameraProxy> {
  const proxy = http.createServer((req, res) => {
    if (camera.hold && req.url?.includes('/api/v1/camera/')) return void camera.held.push(res);
    const upstream = http.request(`${baseUrl}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  const camera: HeldCameraProxy = {
    url: '',
    hold: true,
    held: [],
    release() {
      for (const res of camera.held.splice(0)) res.destroy();
      camera.hold = true;
    },
    close: () => closeLocal(proxy),
  };
  (camera as { url: string }).url = await listenLocal(proxy);
  return camera;
}

/**
 * Mocha hooks for a suite on one simulator: the proxy listens before the suite, each test ends with the held requests
 * destroyed and `hold` set again, the proxy closes after the suite.
 */
export function useHeldCamera(sim: Simulator): HeldCamera {
  let proxy: HeldCameraProxy | undefined;
  const started = (): HeldCameraProxy => {
    if (!proxy) throw new Error('the held camera starts in before(): use it inside hooks and tests');
    return proxy;
  };
  before(async function () {
    proxy = await startHeldCamera(sim.baseUrl);
  });
  afterEach(function () {
    proxy?.release();
  });
  after(async function () {
    await proxy?.close();
  });
  return {
    get url() {
      return started().url;
    },
    get hold() {
      return started().hold;
    },
    set hold(value: boolean) {
      started().hold = value;
    },
    get held() {
      return started().held;
    },
  };
}
