/**
 * Review finding (example 07's answer buttons): the state document clips a title to 200 characters and a response to
 * 100, and the page sends the error as shown (id, title, severity, responses) to lh-answer-error. An error whose
 * title is longer than 200 characters was then refused as "changed" on every click (the clipped title is another
 * error's to the identity check), and a response longer than 100 characters was sent to the instrument clipped (the
 * check against the offered responses passed: the shown list was clipped the same way).
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import type { LabEvent } from '../../src/observe/lab-events';
import { fold, newMemory, type StateMemory } from '../../src/observe/state-document';
import { bServerFlow, loadFlowWithChange, pollsDone } from '../nodes/lh-error-poll.support';
import { restartMemory } from '../support/homes';
import { useInstrument } from '../support/node-suite';
import { helper, nextMessage } from '../support/runtime';
import { until } from '../support/until';

/** The runtime loads the built package (nodes/): its lab events are that module's. */

const built = require('../../nodes/observe/lab-events.js') as typeof import('../../src/observe/lab-events');

type Msg = Record<string, unknown>;

describe('review: example 07 answers an error with a long title or response as the instrument gave it', function () {
  this.timeout(30000);
  const sim = useInstrument({ afterEach: () => restartMemory() });
  let memory: StateMemory;
  let stop: () => void = () => undefined;

  beforeEach(async function () {
    memory = newMemory('sim', 0);
    stop = built.onLabEvent((e: LabEvent) => {
      memory = fold(memory, e, Date.now());
    });
    const server = bServerFlow(sim, { withB: false });
    await loadFlowWithChange(
      [
        ...server.nodes,
        { id: 'poll', type: 'lh-error-poll', server: 'server', source: 'A', interval: 0.5, wires: [[], [], []] },
        { id: 'answer', type: 'lh-answer-error', server: 'server', wires: [['out']] },
        { id: 'out', type: 'helper' },
        { id: 'catcher', type: 'catch', scope: ['answer'], wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      server.credentials,
    );
  });
  afterEach(() => stop());

  const answers = (): Msg[] => sim.requests.filter((r) => r.path === '/api/v1/errors/runtime').map((r) => r.body as Msg);

  /** What the page's button sends for the listed error with this id (example 07's template, `answer(e, r)`). */
  function click(id: string, responseIndex: number): Msg {
    const e = memory.doc.errors.list.find((x) => x.id === id);
    assert.ok(e, 'the document lists the error');
    const responses = e.responses ?? [];
    const shown: Msg = { id: e.id, severity: e.severity, errorResponses: responses };
    if (!e.titleClipped) shown.title = e.title;
    return { errorId: e.id, selectedResponse: responses[responseIndex], payload: shown };
  }

  async function answered(msg: Msg): Promise<Msg> {
    const out = nextMessage(helper.getNode('out'));
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('answer').receive(msg);
    return Promise.race([out, caught]);
  }

  it('a title over 200 characters: the button answers it (not refused as "changed")', async function () {
    const title = `Liquid level low in ${'reagent trough position 3, '.repeat(10)}check`;
    assert.ok(title.length > 200);
    const injected = sim.injectPendingError({ title, responses: ['Retry', 'Abort'] });
    await until(() => memory.doc.errors.list.some((e) => e.id === injected.id), 'listed in the document', 10000);
    const result = await answered(click(injected.id, 1));
    assert.equal((result._error as Msg | undefined)?.message, undefined, 'not refused');
    assert.deepEqual(
      answers().map((a) => a.selectedResponse),
      ['Abort'],
    );
  });

  it('a response over 100 characters: the button sends it whole, never clipped', async function () {
    const long = `Aspirate again from ${'the next well of the same column, '.repeat(4)}then continue`;
    assert.ok(long.length > 100 && long.length <= 200);
    const injected = sim.injectPendingError({ responses: [long, 'Abort'] });
    await until(() => memory.doc.errors.list.some((e) => e.id === injected.id), 'listed in the document', 10000);
    const result = await answered(click(injected.id, 0));
    assert.equal((result._error as Msg | undefined)?.message, undefined, 'not refused');
    assert.deepEqual(
      answers().map((a) => a.selectedResponse),
      [long],
      'the answer goes with the response the instrument offers',
    );
  });

  it('two browser tabs click at once: one answer goes, the other is refused saying so', async function () {
    const injected = sim.injectPendingError({ responses: ['Retry', 'Abort'] });
    await until(() => memory.doc.errors.list.some((e) => e.id === injected.id), 'listed in the document', 10000);
    const out = nextMessage(helper.getNode('out'));
    const caught = nextMessage(helper.getNode('caught'));
    helper.getNode('answer').receive(click(injected.id, 0));
    helper.getNode('answer').receive(click(injected.id, 1));
    const [answeredMsg, refused] = await Promise.all([out, caught]);
    assert.equal((answeredMsg.payload as Msg).id, injected.id);
    assert.match(String((refused._error as Msg).message), /already answered|being answered/);
    assert.equal(answers().length, 1, 'one answer reached the instrument');
  });

  it('an error with errorData items: the button answers each item, as an answer by id does', async function () {
    const injected = sim.injectPendingError({
      responses: ['Retry', 'Abort'],
      errorData: [
        { id: 'ch1', description: 'channel 1' },
        { id: 'ch2', description: 'channel 2' },
      ],
    });
    await until(() => memory.doc.errors.list.some((e) => e.id === injected.id), 'listed in the document', 10000);
    const result = await answered(click(injected.id, 0));
    assert.equal((result._error as Msg | undefined)?.message, undefined, 'not refused');
    assert.deepEqual(answers()[0]?.errorData, [
      { id: 'ch1', selectedResponse: 'Retry' },
      { id: 'ch2', selectedResponse: 'Retry' },
    ]);
  });

  it('a response lh-answer-error cannot send (over 200 characters) gets no button; the others do', async function () {
    const tooLong = 'x'.repeat(201);
    const injected = sim.injectPendingError({ responses: [tooLong, 'Abort'] });
    await until(() => memory.doc.errors.list.some((e) => e.id === injected.id), 'listed in the document', 10000);
    assert.deepEqual(memory.doc.errors.list.find((e) => e.id === injected.id)?.responses, ['Abort']);
  });

  it('two errors under one id whose titles differ: a clipped title still never answers the other one', async function () {
    const title = `Tip pick-up failed ${'on channel 1 of the head, '.repeat(9)}`;
    const first = sim.injectPendingError({ title, severity: 'Error', responses: ['Retry', 'Abort'] });
    await until(() => memory.doc.errors.list.some((e) => e.id === first.id), 'listed in the document', 10000);
    const msg = click(first.id, 1);
    sim.injectPendingError({ id: first.id, reuseId: true, title: 'Door open', severity: 'Warning', responses: ['Abort'] });
    await pollsDone(sim, 2);
    const result = await answered(msg);
    assert.match(String((result._error as Msg | undefined)?.message), /no longer the error that was seen/);
    assert.deepEqual(answers(), [], 'nothing sent');
  });
});

describe('review: the state document lists responses whole and says when a title is clipped (any texts)', function () {
  it('every listed response is one the instrument offers; titleClipped exactly when the title is not the whole one', function () {
    const about = { instrumentKey: 'k', instrument: 'X' };
    fc.assert(
      fc.property(
        fc.string({ maxLength: 400, size: 'max' }),
        fc.array(fc.string({ minLength: 1, maxLength: 300, size: 'max' }), { maxLength: 15 }),
        (title, responses) => {
          const m = fold(
            newMemory('X', 0),
            { ...about, kind: 'errors', pending: [{ source: 'A', id: '1', title, severity: 'Error', responses }] },
            1,
          );
          const listed = m.doc.errors.list[0];
          for (const r of listed.responses ?? []) assert.ok(responses.includes(r) && r.length <= 200);
          assert.equal(listed.titleClipped === true, listed.title !== title);
          // folded again (a later poll lists it again): the mark stays
          const again = fold(
            m,
            { ...about, kind: 'errors', pending: [{ source: 'A', id: '1', title, severity: 'Error', responses }] },
            2,
          );
          assert.deepEqual(again.doc.errors.list[0], listed);
        },
      ),
    );
  });
});
