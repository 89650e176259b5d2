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

import { LhError } from '../../src/client';
import { Transport } from '../../src/client/transport';
import { recordDeliveries, stopRecording } from '../nodes/lh-error-poll.support';
import { useAnswerProxy } from '../support/answer-proxy';
import { restartMemory } from '../support/homes';
import { closeLocal, listenLocal } from '../support/local-server';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
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
  // in front of the simulator: camera requests redirected to a pre-signed object URL, everything else passed on
  const proxy = useAnswerProxy(
    () => sim.baseUrl,
    (req, _up, res) => {
      if (!req.url?.includes('/api/v1/camera/')) return false;
      res.writeHead(302, {
        Location: `https://store.example/deck/latest.png?X-Amz-Signature=${SIGNATURE}&sig=${SIGNATURE}#k=${SIGNATURE}`,
      });
      res.end();
      return true;
    },
  );

  it('the raised msg and the log say where it redirects, without its signed query', async function () {
    const server = serverFlow(sim, { withB: false, config: { baseUrl: proxy.url } });
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

describe('review: a refused redirect never names its target’s query, fragment or userinfo (seeded)', function () {
  const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Math.floor(Math.random() * 2 ** 32);
  const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 40;
  let server: http.Server | undefined;
  let base = '';
  const locations: string[] = [];

  before(async function () {
    server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(Number((req.url ?? '').split('/').pop()) || 302, { Location: locations.shift() ?? '/' });
      res.end();
    });
    base = await listenLocal(server);
  });
  after(async function () {
    if (server) await closeLocal(server);
  });

  it(`seed ${SEED}, ${CASES} cases: the secret parts of the Location are left out, where it leads is said`, async function () {
    const rng = new Rng(SEED);
    const word = (n: number): string =>
      Array.from({ length: n }, () => rng.pick([...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~%'])).join(
        '',
      );
    const transport = new Transport({ baseUrl: base, retries: 0, timeoutMs: 5000 });
    try {
      for (let i = 0; i < CASES; i++) {
        const secret = `S3CR3T${word(rng.int(8, 40))}`;
        const host = rng.pick(['store.example', 'cam.lab.local:8443', '10.0.0.7', '[fd00::7]:9000']);
        // segments start with a letter: a drawn `..` or `%2e` would be a path a client resolves, not the one written
        const where = `/p${word(rng.int(1, 12))}/p${word(rng.int(1, 12))}.png`;
        // a password may hold `@` (a client reads the userinfo to the last one), or be the part after one
        const userinfo = rng.chance(0.4)
          ? rng.pick([`${word(4)}:${secret}@`, `${word(4)}:${word(3)}@${secret}@`, `${word(4)}:${secret}@${word(3)}@`])
          : '';
        // as written, or as a client following it reads it too: `https:\\` is `https://`, a tab is left out
        const scheme = rng.pick(['https://', 'http://', '//', '', 'https:\\\\', 'http:/\\', 'ht\ttps://']);
        const query = rng.chance(0.8)
          ? `?${rng.pick(['X-Amz-Signature', 'sig', 'token', 'se', 'key'])}=${secret}&a=${word(3)}`
          : '';
        const fragment = rng.chance(0.3) || (!query && !userinfo) ? `#${secret}` : '';
        const location = scheme === '' ? `${where}${query}${fragment}` : `${scheme}${userinfo}${host}${where}${query}${fragment}`;
        locations.push(location);
        const status = rng.pick([301, 302, 303, 307, 308]);
        const what = `seed ${SEED} case ${i}: ${location}`;
        await assert.rejects(
          transport.request({ api: 'A', method: 'GET', path: `/camera/${status}`, operation: 'snapshot', idempotent: true }),
          (err: unknown) => {
            assert.ok(err instanceof LhError, what);
            assert.equal(err.statusCode, status, what);
            assert.doesNotMatch(err.message, /S3CR3T/, `${what}: ${err.message}`);
            assert.ok(err.message.includes(where), `${what}: the path is named: ${err.message}`);
            return true;
          },
        );
      }
    } finally {
      await transport.close();
    }
  });
});
