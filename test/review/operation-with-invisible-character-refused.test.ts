/**
 * Review finding (fix75): a msg.operation holding a character that shows as nothing (U+200B zero-width space, U+FEFF
 * byte-order mark, U+2060 word joiner, …) named none of a node's operations, so the node left it alone as a msg
 * passing on from another node and ran the operation chosen in its dialog: `"abort\u200B"` (pasted from a chat or a
 * web page) made an lh-run set to start start a run, and `"\u200B"` alone read as no operation. Now every operation
 * node refuses it, naming msg.operation, the rule and the character: the msg reaches Catch, nothing is sent to the
 * instrument, nothing goes out.
 *
 * Drawn over the operation nodes, their operations, dialog set or "from msg", the invisible character and where it
 * sits; seed printed, LH_SEED / LH_CASES replay and extend.
 */
import assert from 'node:assert/strict';

import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, loadFlow, nextMessage, serverFlow } from '../support/runtime';

type Msg = Record<string, unknown>;
const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 6;

/** Each operation node, the operation its dialog is set to, and the operations it knows. */
const NODES: { type: string; dialog: string; operations: string[] }[] = [
  { type: 'lh-run', dialog: 'start', operations: ['start', 'pause', 'resume', 'abort', 'cleanup', 'status', 'protocols'] },
  { type: 'lh-settings', dialog: 'get-software-settings', operations: ['get-software-settings', 'get-policy-settings'] },
  { type: 'lh-error-log', dialog: 'list', operations: ['list', 'get'] },
  { type: 'lh-run-data', dialog: 'list', operations: ['list', 'get', 'report'] },
  { type: 'lh-service-routine', dialog: 'list', operations: ['list', 'get', 'update'] },
  { type: 'lh-protocol', dialog: 'export', operations: ['export', 'plan', 'apply', 'validate'] },
  { type: 'lh-steps', dialog: 'list', operations: ['list', 'get', 'delete', 'disable'] },
  { type: 'lh-register-handler', dialog: 'check', operations: ['register', 'unregister', 'check'] },
];
const INVISIBLES = ['\u200B', '\uFEFF', '\u2060', '\u200C', '\u200D', '\u00AD', '\u2063'];

describe('review: a msg.operation with an invisible character is refused, not read as no operation', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  before(() => console.log(`      seed ${SEED} (LH_SEED=${SEED} to replay), ${CASES} cases`));

  const rng = new Rng(SEED);
  for (let c = 0; c < CASES; c++) {
    const node = NODES[rng.below(NODES.length)];
    const fromMsg = rng.next() < 0.3;
    const char = INVISIBLES[rng.below(INVISIBLES.length)];
    const alone = rng.next() < 0.2;
    const name = node.operations[rng.below(node.operations.length)];
    const at = rng.int(0, name.length);
    const asked = alone ? char : `${name.slice(0, at)}${char}${name.slice(at)}`;
    const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const shown = JSON.stringify(asked).replace(/\p{Cf}/gu, (ch) => `\\u${ch.codePointAt(0)!.toString(16).padStart(4, '0')}`);
    it(`case ${c}: ${node.type} (${fromMsg ? 'from msg' : node.dialog}), msg.operation ${shown}`, async function () {
      const f = serverFlow(sim, { withB: node.type === 'lh-register-handler' });
      await loadFlow(
        [
          ...f.nodes,
          { id: 'op', type: node.type, server: 'server', operation: fromMsg ? 'msg' : node.dialog, wires: [['out']] },
          { id: 'catcher', type: 'catch', wires: [['caught']] },
          { id: 'out', type: 'helper' },
          { id: 'caught', type: 'helper' },
        ],
        f.credentials,
      );
      let sent = false;
      helper.getNode('out').on('input', () => (sent = true));
      const before = sim.requests.length;
      const caught = nextMessage(helper.getNode('caught'));
      const out = nextMessage(helper.getNode('out')).then((m) => {
        throw new Error(`the node ran an operation: ${JSON.stringify(m).slice(0, 200)}`);
      });
      helper.getNode('op').receive({ operation: asked, protocolId: 1, payload: {} });
      const msg = await Promise.race([caught, out]);
      const error = msg.error as Msg;
      const cause = (error.cause ?? error) as Msg;
      assert.equal(cause.field, 'operation', JSON.stringify(error));
      assert.equal(cause.kind, 'validation');
      assert.match(String(error.message), /msg\.operation must not contain invisible characters/);
      assert.match(String(error.message), new RegExp(`has ${code.replace('+', '\\+')} at position ${alone ? 1 : at + 1}`));
      assert.ok(!String(error.message).includes(char), 'the character itself is shown escaped');
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(sent, false, 'a msg went out');
      assert.equal(sim.requests.length, before, 'a request reached the instrument');
    });
  }
});
