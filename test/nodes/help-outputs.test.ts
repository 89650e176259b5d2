// The help of a node is the user's reference (README: "the edit dialog's help tells the details of each"): every msg
// property the node sets on its output is in the Outputs list of its help. Each older node runs its operations
// against the simulator; what its output msg has that its input msg did not must be documented.
import assert from 'node:assert/strict';
import fs from 'fs';
import path from 'path';

import { restartMemory } from '../support/homes';
import { loadNode, useInstrument } from '../support/node-suite';
import { helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';
import { loadWithPage, startPageServer } from './lh-answer-page.support';

type Msg = Record<string, unknown>;

/** The property names of the Outputs list of a node's help (locales/en-US/<type>.html). */
function documentedOutputs(type: string): Set<string> {
  const file = path.resolve(__dirname, '..', '..', 'src', 'nodes', type, 'locales', 'en-US', `${type}.html`);
  const html = fs.readFileSync(file, 'utf8');
  const outputs = html.split(/<h3>Outputs<\/h3>/)[1]?.split(/<h3>/)[0] ?? '';
  const names = [...outputs.matchAll(/<dt[^>]*>\s*([^<]+?)\s*<span/g)].flatMap((m) => m[1].split(/\s*,\s*/));
  return new Set(names);
}

describe('help: every msg property an older node sets is in its help Outputs', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });

  const cases: [string, Msg, Msg[], boolean?][] = [
    ['lh-error-log', { operation: 'msg' }, [{ operation: 'list' }, { operation: 'list', limit: 1 }]],
    ['lh-error-log', { operation: 'list', allPages: true, limit: '1', limitType: 'num' }, [{}]],
    ['lh-steps', { operation: 'msg', protocolId: '1', protocolIdType: 'num' }, [{ operation: 'list' }]],
    ['lh-settings', { operation: 'get-software-settings' }, [{}]],
    ['lh-service-routine', { operation: 'list' }, [{}]],
    ['lh-clear-errors', {}, [{}]],
    ['lh-register-handler', { operation: 'msg' }, [{ operation: 'register' }, { operation: 'check' }], true],
    [
      'lh-instrument',
      { operation: 'msg' },
      [{ operation: 'snapshot' }, { operation: 'traces', limit: 2 }, { operation: 'heater-status' }, { operation: 'has-tips' }],
    ],
  ];
  for (const [type, config, msgs, withB] of cases) {
    it(`${type} ${JSON.stringify(config)}`, async function () {
      sim.injectPendingError({ title: 'Clot detected' });
      sim.injectPendingError({ title: 'Tip missing' });
      const documented = documentedOutputs(type);
      const n = await loadNode(sim, { id: 'n', type, ...config }, { server: { withB: withB ?? false } });
      for (const msg of msgs) {
        const out = await n.run({ ...msg, _msgid: 'm' });
        const added = Object.keys(out).filter((k) => !(k in msg) && !k.startsWith('_'));
        assert.deepEqual(
          added.filter((k) => !documented.has(k)),
          [],
          `${type} sets ${added.join(', ')}; its help documents ${[...documented].join(', ')}`,
        );
      }
    });
  }

  it('lh-submit-recovery', async function () {
    const error = sim.injectInstrumentError();
    sim.state.handlers.add('nodered1');
    const documented = documentedOutputs('lh-submit-recovery');
    const n = await loadNode(sim, { id: 'n', type: 'lh-submit-recovery', kind: 'recovery' }, { server: { withB: true } });
    const msg = { uuid: error.uuid, selectedActionId: 1 };
    const out = await n.run({ ...msg });
    const added = Object.keys(out).filter((k) => !(k in msg) && !k.startsWith('_'));
    assert.deepEqual(
      added.filter((k) => !documented.has(k)),
      [],
      `sets ${added.join(', ')}; documents ${[...documented].join(', ')}`,
    );
  });

  // the deck photo (README "The deck in view"): what it puts on a raised msg, and why there is none, is in the help
  for (const camera of [true, false]) {
    it(`lh-error-poll's raised msg, ${camera ? 'with its deck photo' : 'the instrument without a camera'}`, async function () {
      sim.configureDeck({ camera });
      sim.injectPendingError({ title: 'Clot detected' });
      const server = serverFlow(sim, { withB: false });
      await loadFlow(
        [
          ...server.nodes,
          { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [['raised'], [], []] },
          { id: 'raised', type: 'helper' },
        ],
        server.credentials,
      );
      const out = await nextMessage(helper.getNode('raised'));
      assert.ok(camera ? out.snapshot : out.snapshotError, 'the photo, or why there is none');
      const undocumented = Object.keys(out).filter((k) => !k.startsWith('_') && !documentedOutputs('lh-error-poll').has(k));
      assert.deepEqual(undocumented, [], `its help documents ${[...documentedOutputs('lh-error-poll')].join(', ')}`);
    });

    it(`lh-answer-page's msg, ${camera ? 'with the photo it took' : 'the instrument without a camera'}`, async function () {
      sim.configureDeck({ camera });
      const web = await startPageServer();
      try {
        const server = serverFlow(sim, { withB: false });
        await loadWithPage(
          [
            ...server.nodes,
            {
              id: 'page',
              type: 'lh-answer-page',
              server: 'server',
              publicUrl: web.url,
              publicUrlType: 'str',
              wires: [['out'], []],
            },
            { id: 'out', type: 'helper' },
          ],
          server.credentials,
        );
        const error = sim.injectPendingError({ title: 'Clot detected' });
        const msg: Msg = { payload: error, source: 'A', event: 'raised', notification: 'n' };
        const got = nextMessage(helper.getNode('out'));
        helper.getNode('page').receive({ ...msg });
        const out = await got;
        assert.ok(camera ? out.snapshotUrl : out.snapshotError, 'the photo, or why there is none');
        const documented = documentedOutputs('lh-answer-page');
        const added = Object.keys(out).filter((k) => !(k in msg) && !k.startsWith('_'));
        assert.deepEqual(
          added.filter((k) => !documented.has(k)),
          [],
          `sets ${added.join(', ')}; documents ${[...documented].join(', ')}`,
        );
      } finally {
        await helper.unload();
        await web.close();
      }
    });
  }
});
