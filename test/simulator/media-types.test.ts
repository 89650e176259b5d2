import { strict as assert } from 'node:assert';
import { ChildProcess, spawn } from 'child_process';
import path from 'path';

import axios from 'axios';

import { checkMediaType } from '../../src/simulator/media-types';
import { HttpProblem } from '../../src/simulator/problem';
import { isStrict } from '../../src/simulator/simulator';

const A_TYPES = [
  'application/json',
  'application/json-patch+json',
  'text/json',
  'application/vnd.lab+json',
  'Application/JSON; charset=utf-8',
];

/** The status checkMediaType refuses the media type with; 0 when it accepts it. */
function status(...args: Parameters<typeof checkMediaType>): number {
  try {
    checkMediaType(...args);
    return 0;
  } catch (err) {
    assert.ok(err instanceof HttpProblem);
    return err.status;
  }
}

describe('simulator: media types by mode', function () {
  it('default (lenient, as a real instrument): every JSON media type on every A body; B keeps its versioned type', function () {
    for (const kind of ['json', 'json-patch'] as const)
      for (const type of A_TYPES) assert.equal(status(kind, type, true), 0, `${kind} ${type}`);
    for (const type of ['text/xml', 'application/x-www-form-urlencoded', undefined])
      assert.equal(status('json', type, true), 415, String(type));
    assert.equal(status('vector', 'application/json', true), 415);
    assert.equal(status('vector', 'application/json; x-api-version=3.0', true), 0);
  });

  it('strict: only the type interfaces.md names for the operation', function () {
    assert.equal(status('json-patch', 'application/json', false), 415);
    assert.equal(status('json', 'application/json-patch+json', false), 415);
    assert.equal(status('json-patch', 'application/json-patch+json; charset=utf-8', false), 0);
  });

  it('the options: strict wins, lenientMediaTypes is its older inverse, the default is lenient', function () {
    assert.equal(isStrict({}), false);
    assert.equal(isStrict({ strict: true }), true);
    assert.equal(isStrict({ lenientMediaTypes: false }), true);
    assert.equal(isStrict({ lenientMediaTypes: true }), false);
    assert.equal(isStrict({ strict: false, lenientMediaTypes: false }), false);
  });

  describe('lh-simulator --strict', function () {
    const cli = path.resolve(__dirname, '..', '..', 'nodes', 'simulator', 'cli.js');
    let child: ChildProcess | undefined;

    afterEach(async function () {
      const c = child;
      child = undefined;
      if (c && c.exitCode === null) {
        const exited = new Promise((resolve) => c.once('exit', resolve));
        c.kill('SIGTERM');
        await exited;
      }
    });

    function run(args: string[]): Promise<string> {
      const c = spawn(process.execPath, [cli, '--port', '0', '--https-port', '0', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = c;
      let out = '';
      return new Promise((resolve, reject) => {
        c.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const m = /interface A \(preparation service\): (\S+)/.exec(out);
          if (m) resolve(m[1]);
        });
        c.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
        c.once('exit', (code) => reject(new Error(`lh-simulator exited (${code}): ${out}`)));
      });
    }

    for (const [args, expected] of [
      [['--strict'], 415],
      [[], 200],
    ] as const) {
      it(`${args.join(' ') || '(no flag)'}: a login sent as application/json gets ${expected}`, async function () {
        const base = await run([...args]);
        const res = await axios.post(
          `${base}/api/v1/authenticate`,
          { username: 'admin', password: 'labwire' },
          { validateStatus: () => true, proxy: false, headers: { 'Content-Type': 'application/json', Connection: 'close' } },
        );
        assert.equal(res.status, expected);
      });
    }
  });
});
