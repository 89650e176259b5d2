/**
 * Review finding (the fleet tab, lh-state): two lh-server nodes of one name (an instrument's watch copied for a second
 * instrument, its server left unrenamed) publish their state documents on one topic, and the fleet tab, whose rows
 * are known by the instrument's name, showed one row flipping between the two instruments: one instrument and its
 * pending errors missing from the screen, without a word. A state node now warns at deploy, naming the name.
 *
 * review47: one instrument whose URLs two lh-server nodes spell two ways (`localhost` and `127.0.0.1`, README: "however
 * they are spelled") was taken for two instruments: a warning about "another instrument" at every deploy, though both
 * state nodes send that one instrument's document. The clash now compares the instruments' identities; the second
 * instrument here is another address.
 */
import assert from 'node:assert/strict';

import { nameClash } from '../../src/nodes/lh-state/name-clash';
import { useInstrument } from '../support/node-suite';
import { helper, packageNodes, serverFlow, tlsConfigNode } from '../support/runtime';

type Msg = Record<string, unknown>;

describe('review: two instruments of one name are said at deploy', function () {
  this.timeout(30000);
  const sim = useInstrument();

  /** the warnings the runtime logged for lh-state nodes */
  function stateWarnings(): string[] {
    const log = helper.log() as unknown as { args: [Msg][] };
    return log.args
      .map(([entry]) => entry)
      .filter((entry) => entry.type === 'lh-state' && entry.level === 30)
      .map((entry) => String(entry.msg));
  }

  async function deploy(secondName: string, secondUrl: string): Promise<void> {
    const first = serverFlow(sim, { id: 'one', withB: false });
    const second = serverFlow(sim, { id: 'two', withB: false, config: { name: secondName, baseUrl: secondUrl } });
    await helper.load(
      [tlsConfigNode, ...packageNodes()],
      [
        ...first.nodes,
        ...second.nodes,
        { id: 's1', type: 'lh-state', server: 'one', machineInterval: 0, repeat: 0, wires: [[], []] },
        { id: 's2', type: 'lh-state', server: 'two', machineInterval: 0, repeat: 0, wires: [[], []] },
      ],
      { ...first.credentials, ...second.credentials },
    );
  }

  /** Another instrument (nothing answers there: a state node without watches never asks it). */
  const otherInstrument = 'http://127.0.0.1:1';

  it('two instruments named alike: a warning that names the name', async function () {
    await deploy('sim', otherInstrument);
    const warnings = stateWarnings();
    assert.equal(warnings.length, 1, 'one warning (from the second state node)');
    assert.equal(warnings[0], 'lh-state.errors.sameName', 'the test runtime logs the key (its text: below)');
    const catalogue = require('../../nodes/nodes/lh-state/locales/en-US/lh-state.json') as Record<
      string,
      { errors: Record<string, string> }
    >;
    const text = catalogue['lh-state'].errors.sameName;
    assert.match(text, /"__name__".*one topic.*one row of a fleet tab.*its own name/);
  });

  it('two instruments of two names: no warning', async function () {
    await deploy('other', otherInstrument);
    assert.deepEqual(stateWarnings(), []);
  });

  it('one instrument whose URLs two lh-server nodes of one name spell two ways: no warning', async function () {
    await deploy('sim', sim.baseUrl.replace('127.0.0.1', 'localhost'));
    assert.deepEqual(stateWarnings(), []);
  });

  it('names that differ only in what a topic level cannot hold clash too; one instrument never clashes with itself', function () {
    assert.ok(nameClash({ instrumentKey: 'a', instrument: 'Star/1' }, [{ instrumentKey: 'b', instrument: 'Star+1' }]));
    assert.equal(nameClash({ instrumentKey: 'a', instrument: 'Star' }, [{ instrumentKey: 'a', instrument: 'Star' }]), undefined);
    assert.equal(
      nameClash({ instrumentKey: 'HTTP://localhost:8080/|', instrument: 'Star' }, [
        { instrumentKey: 'http://127.0.0.1:8080|', instrument: 'Star' },
      ]),
      undefined,
      'one instrument spelled two ways',
    );
    assert.equal(
      nameClash({ instrumentKey: 'a', instrument: 'Star' }, [{ instrumentKey: 'b', instrument: 'Vantage' }]),
      undefined,
    );
  });
});
