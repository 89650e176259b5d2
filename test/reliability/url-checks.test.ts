/**
 * The configured addresses (issue 10, points 4 and 5): a URL with a user name or password is refused with a clear
 * error that does not echo the password, before anything is sent; interface B over plain http:// is refused unless
 * "allow unencrypted B (tests only)" is ticked, as its token would travel in clear.
 */
import assert from 'node:assert/strict';
import { inspect } from 'util';

import { LhError, LiquidHandlerClient } from '../../src/client';
import { checkUrls } from '../../src/client/url-checks';
import { builtNode, useInstrument } from '../support/node-suite';
import { helper, nextMessage, tlsConfigNode, USER } from '../support/runtime';

const URL_PASSWORD = 'pw-in-url-77';

function refusal(fn: () => unknown): LhError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof LhError, String(err));
    return err;
  }
  assert.fail('expected the configuration to be refused');
}

describe('URL checks of the client (constructor)', function () {
  it('refuses a base or instrument URL with userinfo, naming the field and the rule, without the password', function () {
    for (const [options, field] of [
      [{ baseUrl: `http://admin:${URL_PASSWORD}@10.0.0.2/NimbusLite` }, 'baseUrl'],
      [{ baseUrl: `http://admin@10.0.0.2` }, 'baseUrl'],
      [{ baseUrl: 'http://10.0.0.2', instrumentUrl: `https://admin:${URL_PASSWORD}@10.0.0.3` }, 'instrumentUrl'],
      [{ baseUrl: `admin:${URL_PASSWORD}@10.0.0.2` }, 'baseUrl'],
    ] as const) {
      const err = refusal(() => new LiquidHandlerClient(options));
      assert.equal(err.kind, 'config');
      assert.equal(err.field, field);
      assert.doesNotMatch(inspect(err, { depth: 5 }), new RegExp(URL_PASSWORD));
      if (options.baseUrl.startsWith('http'))
        assert.match(err.message, new RegExp(`${field} must not contain a user name or password`));
    }
  });

  it('refuses a base or instrument URL with a query or fragment, naming the field and the rule, without the query', function () {
    const key = 'k3y-in-query-91';
    for (const [options, field] of [
      [{ baseUrl: `http://10.0.0.2/NimbusLite?apikey=${key}` }, 'baseUrl'],
      [{ baseUrl: `http://10.0.0.2#${key}` }, 'baseUrl'],
      [{ baseUrl: 'http://10.0.0.2/?' }, 'baseUrl'],
      [{ baseUrl: 'http://10.0.0.2', instrumentUrl: `https://10.0.0.3/?token=${key}` }, 'instrumentUrl'],
    ] as const) {
      const err = refusal(() => new LiquidHandlerClient(options));
      assert.equal(err.kind, 'config');
      assert.equal(err.field, field);
      assert.match(err.message, new RegExp(`${field} must not contain a query`));
      assert.doesNotMatch(inspect(err, { depth: 5 }), new RegExp(key));
    }
  });

  it('refuses B over http:// unless allowed explicitly, and says why', function () {
    const err = refusal(() => checkUrls({ baseUrl: 'http://10.0.0.2', instrumentUrl: 'http://10.0.0.3' }));
    assert.equal(err.field, 'instrumentUrl');
    assert.match(err.message, /must be an https:\/\/ URL.*in clear.*allow unencrypted B/);
    checkUrls({ baseUrl: 'http://10.0.0.2', instrumentUrl: 'http://10.0.0.3', allowInsecureInstrument: true });
    checkUrls({ baseUrl: 'http://10.0.0.2', instrumentUrl: 'https://10.0.0.3' });
    checkUrls({ baseUrl: 'https://10.0.0.2/NimbusLite' });
    assert.equal(refusal(() => checkUrls({ baseUrl: 'ftp://10.0.0.2' })).field, 'baseUrl');
  });
});

describe('URL checks in the nodes (runtime and Test connection)', function () {
  const sim = useInstrument({ adminServer: true });

  async function loadWith(server: Record<string, unknown>): Promise<string[]> {
    await helper.load(
      [tlsConfigNode, builtNode('lh-server'), builtNode('lh-settings')],
      [
        { id: 'server', type: 'lh-server', instrumentUrl: '', clientKey: 'k1', timeout: 3000, ...server },
        { id: 'settings', type: 'lh-settings', server: 'server', operation: 'get-software-settings', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['settings'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      { server: { ...USER } },
    );
    const texts: string[] = [];
    for (const id of ['server', 'settings'])
      for (const method of ['status', 'log', 'warn', 'error'])
        helper.getNode(id).on(`call:${method}`, (call: { args: unknown[] }) => texts.push(inspect(call.args, { depth: 6 })));
    return texts;
  }

  it('a base URL with userinfo: a clear error at the Catch node, nothing sent, the password nowhere', async function () {
    const withUser = sim.baseUrl.replace('http://', `http://admin:${URL_PASSWORD}@`);
    const texts = await loadWith({ baseUrl: withUser });
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('settings').receive({});
    const msg = await caught;
    const details = msg._error as Record<string, unknown>;
    assert.equal(details.field, 'baseUrl');
    assert.match(String(details.message), /baseUrl must not contain a user name or password/);
    assert.doesNotMatch(inspect(msg, { depth: 8 }), new RegExp(URL_PASSWORD));
    for (const t of texts) assert.doesNotMatch(t, new RegExp(URL_PASSWORD));
    assert.equal(sim.requests.length, 0);
  });

  it('B over http:// is refused by default and works when "allow unencrypted B" is ticked', async function () {
    const plainB = sim.baseUrl; // any http:// address: the point is the scheme
    await loadWith({ baseUrl: sim.baseUrl, instrumentUrl: plainB });
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('settings').receive({});
    const refused = (await caught)._error as Record<string, unknown>;
    assert.equal(refused.field, 'instrumentUrl');
    assert.match(String(refused.message), /https:\/\//);
    assert.equal(sim.requests.length, 0);
    await helper.unload();

    await loadWith({ baseUrl: sim.baseUrl, instrumentUrl: plainB, allowInsecureInstrument: true });
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('settings').receive({});
    assert.equal((await out).statusCode, 200);
  });

  it('Test connection refuses the same addresses, without echoing the password', async function () {
    const res = await helper
      .request()
      .post('/lh-server/test-connection')
      .send({ baseUrl: sim.baseUrl.replace('http://', `http://admin:${URL_PASSWORD}@`), ...USER });
    assert.equal(res.status, 200);
    const report = res.body as { ok: boolean; checks: { message: string }[] };
    assert.equal(report.ok, false);
    assert.match(report.checks[0].message, /must not contain a user name or password/);
    assert.doesNotMatch(res.text, new RegExp(URL_PASSWORD));
    const b = await helper
      .request()
      .post('/lh-server/test-connection')
      .send({ baseUrl: sim.baseUrl, instrumentUrl: sim.baseUrl, ...USER });
    assert.match((b.body as { checks: { message: string }[] }).checks[0].message, /instrumentUrl must be an https:\/\/ URL/);
    assert.equal(sim.requests.length, 0);
  });
});
