/**
 * In a real Node-RED runtime: the chain of an lh-server node's instrument cannot be opened at a deploy (its lock held
 * by a Node-RED of another host, a container recreated under a new host name on the same volume, which the README
 * names as the case to act on). Every request is refused, rightly; but nobody learnt it before a request was tried:
 * no log line and no lh-audit status at the deploy, while a chain that breaks later (disk full, file deleted) is told at
 * once. The lh-server node must log it (with the way out) and lh-audit show "audit refusing" when the chain is opened.
 */
import assert from 'node:assert/strict';
import fs from 'fs';

import { FILE_PATTERN } from '../../src/audit';
import { useAuditDir } from '../audit/chain-support';
import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, nextMessage, runtimeSettings, serverFlow } from '../support/runtime';
import { until } from '../support/until';

describe('audit in Node-RED: a chain that cannot be opened at a deploy', function () {
  const sim = useInstrument();
  const audit = useAuditDir(runtimeSettings);

  it('the lh-server node logs why and lh-audit shows "audit refusing" at once; a request is refused, nothing sent', async function () {
    const server = serverFlow(sim, { withB: false });
    const flow = [
      ...server.nodes,
      { id: 'clear', type: 'lh-clear-errors', server: 'server', wires: [['out']] },
      { id: 'out', type: 'helper' },
      { id: 'catcher', type: 'catch', scope: ['clear'], wires: [['caught']] },
      { id: 'caught', type: 'helper' },
      { id: 'audit', type: 'lh-audit', server: 'server', wires: [[]] },
    ];
    await loadFlow(flow, server.credentials);
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('clear').receive({ payload: 1 });
    await out;
    await helper.unload();
    const first = fs.readdirSync(audit.dir()).find((f) => FILE_PATTERN.test(f));
    assert.ok(first);
    const lock = `${audit.dir()}/${first.replace(/\.000001\.jsonl$/, '.lock')}`;
    fs.writeFileSync(lock, '4242@lab-node-red-old-host abcdef0123456789');

    const spies = helper as unknown as { log(): { args: { level?: unknown; msg?: unknown }[][] } };
    const errors = (): string[] =>
      spies
        .log()
        .args.map((a) => a[0])
        .filter((m) => m?.level === 20 && /lab-node-red-old-host/.test(String(m.msg)))
        .map((m) => String(m.msg));
    const sent = sim.requests.filter((r) => r.path === '/api/v1/errors/clear-errors').length;
    await loadFlow(flow, server.credentials);
    await until(() => errors().length > 0, 'the lh-server node logs the chain it cannot open, before any request');
    assert.ok(errors()[0].includes(lock), `the way out (the lock file) named: ${errors()[0]}`);
    const statuses = (): { fill?: unknown; text?: unknown }[] =>
      (helper.getNode('audit').status as unknown as { getCalls(): { thisValue: { id: string }; args: { text?: unknown }[] }[] })
        .getCalls()
        .filter((c) => c.thisValue.id === 'audit')
        .map((c) => c.args[0]);
    await until(() => statuses().some((s) => /audit refusing/.test(String(s.text))), 'lh-audit shows the chain refusing');
    assert.equal(statuses().find((s) => /audit refusing/.test(String(s.text)))?.fill, 'red');

    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('clear').receive({ payload: 2 });
    assert.match(String(((await caught).error as { message: string }).message), /was not sent/);
    assert.equal(sim.requests.filter((r) => r.path === '/api/v1/errors/clear-errors').length, sent, 'nothing sent');
    assert.equal(errors().length, 1, `told once: ${errors().join('\n')}`);
  });
});
