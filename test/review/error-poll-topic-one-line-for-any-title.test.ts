/**
 * Review (review87): README "Its `msg.topic` is a one-line summary" (DESIGN: "Its msg.topic is a one-line summary"),
 * the text an e-mail node takes for its subject and a debug node writes to the console. The topic collapsed `\s`
 * only: an instrument's title with U+0085 (NEXT LINE, a line break in Unicode) kept it, and a control character (an
 * escape sequence `ESC [2J` that clears a terminal, a NUL) went on into the subject and the log as written.
 *
 * Seeded property in a real Node-RED against the simulator: for drawn titles mixing text (letters, accents, an emoji
 * joined by U+200D) with line breaks and control characters, the raised and the resolved msg's topic is one line
 * with no control character, and the text of the title is in it as written (breaks as spaces). msg.payload keeps the
 * title as the instrument gave it (the answering nodes match it).
 *
 * Seeded PRNG, the seed printed; LH_SEED=<n> replays it, LH_CASES=<n> draws more cases.
 */
import assert from 'node:assert/strict';

import { messageWhere } from '../nodes/lh-error-poll.support';
import { useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { collect, helper, loadFlow, serverFlow } from '../support/runtime';

type Msg = Record<string, unknown>;

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 8;

const TEXT = ['Clot', 'détecté', 'channel 3', 'B4', '👩‍🔬', 'Tip', '—', 'ok'];
const BREAKS = ['\n', '\r\n', '\u0085', '\u2028', '\u2029', '\v', '\f', '\t'];
const CONTROLS = ['\u001b[2J', '\u0000', '\u0007', '\u007f', '\u009b'];
/** A line break, or a C0/C1 control character. */
const NOT_ONE_LINE = /[\n\r\v\f\u0085\u2028\u2029\p{Cc}]/u;

describe('lh-error-poll: msg.topic one line for any title (seeded)', function () {
  this.timeout(30000);
  const sim = useInstrument();

  it(`raised and resolved topics are one line without control characters (seed ${SEED}, ${CASES} cases)`, async function () {
    console.log(`      seed ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    const server = serverFlow(sim, { withB: false });
    await loadFlow(
      [
        ...server.nodes,
        {
          id: 'poll',
          type: 'lh-error-poll',
          server: 'server',
          source: 'A',
          interval: 0.5,
          wires: [['raised'], ['resolved'], []],
        },
        { id: 'raised', type: 'helper' },
        { id: 'resolved', type: 'helper' },
      ],
      server.credentials,
    );
    const raised = collect(helper.getNode('raised'));
    const resolved = collect(helper.getNode('resolved'));
    for (let c = 0; c < CASES; c++) {
      const parts: string[] = [];
      const words: string[] = [];
      for (let i = rng.int(2, 6); i > 0; i--) {
        const word = rng.pick(TEXT);
        words.push(word);
        parts.push(word, rng.chance(0.5) ? rng.pick(BREAKS) : rng.chance(0.5) ? rng.pick(CONTROLS) : ' ');
      }
      const title = parts.join('');
      const error = sim.injectPendingError({ title, severity: 'Error' });
      const up = await messageWhere('raised', (m) => (m.payload as Msg).id === error.id);
      sim.resolvePendingError(error.id);
      const down = await messageWhere('resolved', (m) => (m.payload as Msg).id === error.id);
      for (const [what, msg] of [
        ['raised', up],
        ['resolved', down],
      ] as const) {
        const topic = String(msg.topic);
        assert.ok(!NOT_ONE_LINE.test(topic), `${what} topic of ${JSON.stringify(title)}: ${JSON.stringify(topic)}`);
        for (const word of words) assert.ok(topic.includes(word), `${what} topic keeps ${word}: ${JSON.stringify(topic)}`);
      }
      assert.equal((up.payload as Msg).title, title, 'msg.payload keeps the title as the instrument gave it');
    }
    assert.ok(raised.length >= CASES && resolved.length >= CASES);
  });
});
