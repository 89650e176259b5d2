/**
 * Review finding (review80): since fix75 an operation node refused any msg.operation holding a Unicode format
 * character, also a text of a msg passing on from another node that names none of its operations: a Persian word
 * (its zero-width non-joiner, U+200C, is part of the spelling), an emoji sequence joined by U+200D, a word with a
 * soft hyphen. Such a msg, which an lh-settings set in its dialog to get the settings ran before, was refused and sent
 * nothing. The rule is there for a msg.operation that names an operation with an invisible character in it
 * ("abort\u200B") or nothing at all ("\u200B"); those are still refused (operation-with-invisible-character-refused).
 *
 * Drawn over such texts and the nodes; seed printed, LH_SEED / LH_CASES replay and extend.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 3;

const TEXTS = [
  'می\u200Cخواهم', // Persian: "I want", ZWNJ part of its spelling
  '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}', // family emoji
  '\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}', // the flag of England (tag characters)
  'Pipet\u00ADtierung', // a soft hyphen in a word
  'stop\u200Bwatch',
];
const NODES: { type: string; dialog: string }[] = [
  { type: 'lh-settings', dialog: 'get-software-settings' },
  { type: 'lh-error-log', dialog: 'list' },
  { type: 'lh-run-data', dialog: 'list' },
];

describe('review: a msg.operation passing on that names no operation is left alone, invisible characters or not', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  before(() => console.log(`      seed ${SEED} (LH_SEED=${SEED} to replay), ${CASES} cases`));

  const rng = new Rng(SEED);
  for (let c = 0; c < CASES; c++) {
    const node = NODES[rng.below(NODES.length)];
    const text = TEXTS[rng.below(TEXTS.length)];
    it(`case ${c}: ${node.type} (${node.dialog}), msg.operation ${JSON.stringify(text)}`, async function () {
      const f = serverFlow(sim, { withB: false });
      await loadFlow(
        [
          ...f.nodes,
          { id: 'op', type: node.type, server: 'server', operation: node.dialog, wires: [['out']] },
          { id: 'catcher', type: 'catch', wires: [['caught']] },
          { id: 'out', type: 'helper' },
          { id: 'caught', type: 'helper' },
        ],
        f.credentials,
      );
      const out = nextMessage(helper.getNode('out'));
      const caught = nextMessage(helper.getNode('caught')).then((m: Msg) => {
        throw new Error(`refused: ${String((m.error as Msg | undefined)?.message)}`);
      });
      helper.getNode('op').receive({ operation: text });
      const msg = await Promise.race([out, caught]);
      assert.equal(msg.operation, text, 'the msg passing on keeps its msg.operation');
    });
  }
});
