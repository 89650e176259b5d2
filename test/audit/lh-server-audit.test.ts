/**
 * In a real Node-RED runtime: an lh-server node writes its instrument's chain where settings.js `lhAudit` says, an
 * operation node's request is recorded with that node and its flow as the actor, the password is in no record, and
 * the chain verifies with the configured key.
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import { AuditRecord, expandChain, FILE_PATTERN, verifyChain } from '../../src/audit';
import { statusWhere } from '../nodes/lh-error-poll.support';
import { loadNode, useInstrument } from '../support/node-suite';
import { collect, helper, loadFlow, nextMessage, runtimeSettings, serverFlow } from '../support/runtime';
import { until } from '../support/until';
import { useAuditDir } from './chain-support';

describe('audit in Node-RED: lh-server writes the chain of its instrument', function () {
  const sim = useInstrument();
  const audit = useAuditDir(runtimeSettings);

  function chain(): { records: AuditRecord[]; text: string; ok: boolean; reason?: string } {
    const first = fs.readdirSync(audit.dir()).find((f) => FILE_PATTERN.test(f));
    assert.ok(first, `a chain file in ${audit.dir()}: ${fs.readdirSync(audit.dir()).join(', ')}`);
    const { files, checkpoint } = expandChain(`${audit.dir()}/${first}`);
    const texts = files.map((name) => ({ name, text: fs.readFileSync(name, 'utf8') }));
    const report = verifyChain({
      files: texts,
      checkpoint: checkpoint && fs.readFileSync(checkpoint, 'utf8'),
      key: Buffer.from('node-test-key'),
    });
    const text = texts.map((t) => t.text).join('');
    const records = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as AuditRecord);
    return { records, text, ok: report.ok && report.checkpoint === 'verified', reason: report.firstBad?.reason };
  }

  it('records lh-clear-errors as the actor of clear errors, with its flow, before and after the request', async function () {
    const node = await loadNode(sim, { id: 'clear', type: 'lh-clear-errors' }, { tab: 'Nightly' });
    await node.run({ payload: 1 });
    await helper.unload(); // closes the lh-server node and with it the chain
    const { records, text, ok, reason } = chain();
    assert.ok(ok, reason);
    const intent = records.find((r) => r.phase === 'intent');
    assert.ok(intent && intent.phase === 'intent');
    assert.equal(intent.what.operation, 'clear-errors');
    assert.deepEqual(
      { node: intent.who.node, nodeType: intent.who.nodeType, flow: intent.who.flow },
      { node: 'clear', nodeType: 'lh-clear-errors', flow: 'tab' },
    );
    const outcome = records.find((r) => r.phase === 'outcome' && r.id === intent.id);
    assert.ok(outcome && outcome.phase === 'outcome');
    assert.equal(outcome.outcome.result, 'applied');
    assert.equal(sim.requests.filter((r) => r.path === '/api/v1/errors/clear-errors').length, 1);
    assert.ok(!/labwire/.test(text.replace(/@labwire/g, '')), 'no password in the chain');
    assert.ok(!/eyJ[A-Za-z0-9_-]{4,}\./.test(text), 'no token in the chain');
  });

  it('with lhAudit.enabled false nothing is written and requests go on', async function () {
    runtimeSettings({ lhAudit: { enabled: false } });
    const node = await loadNode(sim, { id: 'clear', type: 'lh-clear-errors' });
    await node.run({ payload: 1 });
    await helper.unload();
    assert.deepEqual(fs.readdirSync(audit.dir()), []);
  });

  it('lh-audit sends the intent and the outcome of each request into the flow, once they are on disk (and the file record)', async function () {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'audit', type: 'lh-audit', server: 'server', wires: [['records']] },
        { id: 'records', type: 'helper' },
      ],
      server.credentials,
    );
    const seen = collect(helper.getNode('records'));
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 1 });
    await out;
    await until(() => seen.length >= 3, 'the chain opened, then two records');
    assert.deepEqual(
      seen.map((m) => m.topic),
      ['file/opened', 'intent/clear-errors', 'outcome/clear-errors'],
    );
    const [intent, outcome] = seen.slice(1).map((m) => m.payload as AuditRecord);
    assert.equal(intent.phase === 'intent' && intent.who.node, 'clear');
    assert.equal(outcome.phase === 'outcome' && outcome.outcome.result, 'applied');
  });

  it('a settings merge records the old settings beside the new ones (old -> new)', async function () {
    const node = await loadNode(sim, { id: 'settings', type: 'lh-settings', operation: 'set-software-settings', mode: 'merge' });
    const before = { ...sim.state.softwareSettings };
    await node.run({ payload: { hideKeyboard: !before.hideKeyboard } });
    await helper.unload();
    const { records, ok, reason } = chain();
    assert.ok(ok, reason);
    const intent = records.find((r) => r.phase === 'intent');
    assert.ok(intent && intent.phase === 'intent');
    assert.equal(intent.what.operation, 'set-software-settings');
    assert.deepEqual(intent.old, before);
    assert.deepEqual(intent.what.body, { ...before, hideKeyboard: !before.hideKeyboard });
    assert.equal(intent.who.node, 'settings');
  });

  it('a policy default names the lh-error-policy node as the actor of the answer', async function () {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        { id: 'tab', type: 'tab', label: 'Walk-away' },
        ...server.nodes,
        {
          id: 'policy',
          type: 'lh-error-policy',
          z: 'tab',
          server: 'server',
          rules: [{ source: 'any', minSeverity: '', pattern: '', code: '', mode: 'walk-away', answer: 'Retry', delay: 0 }],
          wires: [[], ['auto'], []],
        },
        { id: 'auto', type: 'helper', z: 'tab' },
      ],
      server.credentials,
    );
    const auto = nextMessage(helper.getNode('auto'));
    const error = sim.injectPendingError({ title: 'Clot detected', responses: ['Retry', 'Abort'] });
    helper.getNode('policy').receive({ payload: error, source: 'A', event: 'raised' });
    assert.equal((await auto).outcome, 'answered');
    await helper.unload();
    const { records, ok, reason } = chain();
    assert.ok(ok, reason);
    const intent = records.find((r) => r.phase === 'intent' && r.what.operation !== 'logout');
    assert.ok(intent && intent.phase === 'intent');
    assert.deepEqual(
      { node: intent.who.node, nodeType: intent.who.nodeType, flow: intent.who.flow },
      { node: 'policy', nodeType: 'lh-error-policy', flow: 'tab' },
    );
  });

  it('the chain file deleted while Node-RED runs: the request is refused (to Catch, naming the file), nothing is sent, lh-audit says why', async function () {
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
        { id: 'audit', type: 'lh-audit', server: 'server', wires: [[]] },
      ],
      server.credentials,
    );
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 1 });
    await out;
    const file = fs.readdirSync(audit.dir()).find((f) => FILE_PATTERN.test(f));
    assert.ok(file);
    fs.unlinkSync(`${audit.dir()}/${file}`);
    const sent = sim.requests.filter((r) => r.path === '/api/v1/errors/clear-errors').length;
    const refusedStatus = statusWhere('audit', (s) => /audit refusing: chain file deleted/.test(String(s.text)));
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('clear').receive({ payload: 2 });
    const msg = await caught;
    const error = msg.error as { message: string };
    assert.match(error.message, /was not sent/);
    assert.ok(error.message.includes(`${audit.dir()}/${file}`), error.message);
    assert.equal((await refusedStatus).fill, 'red');
    // and every later request too, until a redeploy reopens the chain
    const again = nextMessage(helper.getNode('caught'));
    helper.getNode('clear').receive({ payload: 3 });
    assert.match(String(((await again).error as { message: string }).message), /was not sent/);
    assert.equal(sim.requests.filter((r) => r.path === '/api/v1/errors/clear-errors').length, sent, 'nothing sent');
  });
  it('the checkpoint deleted while Node-RED was stopped: at the next start the lh-server node warns once and lh-audit says so', async function () {
    const server = serverFlow(sim, { withB: false });
    const flow = [
      ...server.nodes,
      { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
      { id: 'out', type: 'helper' },
      { id: 'audit', type: 'lh-audit', server: 'server', wires: [[]] },
    ];
    await loadFlow(flow, server.credentials);
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 1 });
    await out;
    await helper.unload();
    const checkpoint = fs.readdirSync(audit.dir()).find((f) => f.endsWith('.checkpoint.json'));
    assert.ok(checkpoint);
    fs.unlinkSync(`${audit.dir()}/${checkpoint}`);
    const spies = helper as unknown as { log(): { args: { level?: unknown; msg?: unknown }[][] } };
    const warnings = (): string[] =>
      spies
        .log()
        .args.map((a) => a[0])
        .filter((m) => m?.level === 30 && /audit checkpoint .* was missing/.test(String(m.msg)))
        .map((m) => String(m.msg));
    await loadFlow(flow, server.credentials);
    const statuses = (): string[] =>
      (helper.getNode('audit').status as unknown as { getCalls(): { thisValue: { id: string }; args: { text?: unknown }[] }[] })
        .getCalls()
        .filter((c) => c.thisValue.id === 'audit')
        .map((c) => String(c.args[0]?.text));
    await until(() => statuses().includes('audit checkpoint missing'), 'lh-audit shows the checkpoint missing');
    await until(() => warnings().length > 0, 'the lh-server node warns');
    assert.equal(warnings().length, 1, warnings().join('\n'));
    assert.ok(warnings()[0].includes(checkpoint), warnings()[0]);
    // a request still goes (the chain goes on, with a new checkpoint), and the next start says nothing
    const again = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 2 });
    await again;
    await helper.unload();
    await loadFlow(flow, server.credentials);
    const next = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 3 });
    await next;
    assert.deepEqual(warnings(), [], 'said once: not at the start after');
    await helper.unload();
    assert.ok(chain().ok, chain().reason);
  });
});
