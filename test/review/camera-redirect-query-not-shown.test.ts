/**
 * A camera service that answers with a redirect to where the image is stored, as object stores do: a pre-signed URL
 * whose query is the credential (`?X-Amz-Signature=…`, `?sig=…`): whoever holds the whole URL fetches the image.
 * Redirects are never followed (the session token stays on the configured host), and the refusal named the Location
 * in full: the raised error's `msg.snapshotError`, the node's log line and the answer page's 503 carried the signed
 * query to every inbox, chat and log that sees them; the redaction step knows no `sig` / `X-Amz-Signature`. Now the
 * refusal names where it leads (scheme, host, path) and leaves its query and fragment out.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { recordDeliveries, stopRecording } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { closeLocal, listenLocal } from '../support/local-server';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow } from '../support/runtime';
import { until } from '../support/until';

type Msg = Record<string, unknown>;

const SIGNATURE = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

describe('review: a camera redirecting to a signed URL', function () {
  this.timeout(20000);
  const sim = useInstrument({
    afterEach() {
      stopRecording();
      restartMemory();
    },
  });
  let proxy: http.Server | undefined;
  let url = '';

  before(async function () {
    // in front of the simulator: camera requests redirected to a pre-signed object URL, everything else passed on
    proxy = http.createServer((req, res) => {
      if (req.url?.includes('/api/v1/camera/')) {
        res.writeHead(302, {
          Location: `https://store.example/deck/latest.png?X-Amz-Signature=${SIGNATURE}&sig=${SIGNATURE}#k=${SIGNATURE}`,
        });
        return void res.end();
      }
      const upstream = http.request(`${sim.baseUrl}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    url = await listenLocal(proxy);
  });
  after(async function () {
    if (proxy) await closeLocal(proxy);
  });

  it('the raised msg and the log say where it redirects, without its signed query', async function () {
    const server = serverFlow(sim, { withB: false, config: { baseUrl: url } });
    const raised = recordDeliveries('raised');
    await loadFlow(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['raised'], [], []] },
        { id: 'raised', type: 'helper' },
      ],
      server.credentials,
    );
    sim.injectPendingError({ title: 'Arm collision' });
    await until(() => raised.length > 0, 'the error raised', 10_000);
    const msg = raised[0] as Msg;
    const said = String(msg.snapshotError);
    assert.match(said, /redirects to https:\/\/store\.example\/deck\/latest\.png/, said);
    assert.doesNotMatch(said, new RegExp(SIGNATURE), 'no signed query in msg.snapshotError');
    const log = helper.log() as unknown as { args: [Msg][] };
    const lines = log.args.map(([entry]) => String(entry.msg ?? ''));
    assert.ok(
      lines.some((l) => /no deck photo/.test(l)),
      `the reason is logged once: ${lines.join('\n')}`,
    );
    for (const line of lines) assert.doesNotMatch(line, new RegExp(SIGNATURE), `no signed query in the log: ${line}`);
  });
});
