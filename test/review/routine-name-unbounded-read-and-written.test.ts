/**
 * Review finding (review66): an lh-service-routine update took a routine name of any length (900,000 characters:
 * under the body limit), read the routine and wrote the name to the instrument, where a step's name is bounded at
 * 1000 characters. A name is now at most 1000 characters, refused naming payload.name before anything is sent.
 */
import assert from 'node:assert/strict';

import { configuredNode, useInstrument } from '../support/node-suite';

/** The bound (MAX_ROUTINE_NAME_LENGTH of lh-service-routine), as its help says it. */
const MAX_ROUTINE_NAME_LENGTH = 1000;

describe('review: a service routine name is bounded', function () {
  const sim = useInstrument();
  const { load } = configuredNode(
    sim,
    { id: 'routine', type: 'lh-service-routine', operation: 'update' },
    { only: ['lh-server', 'lh-service-routine'] },
  );

  it(`a name of more than ${MAX_ROUTINE_NAME_LENGTH} characters is refused, nothing read or written`, async function () {
    const loaded = await load({});
    for (const length of [MAX_ROUTINE_NAME_LENGTH + 1, 900_000]) {
      await loaded.expectFailure(
        { routineId: 1, payload: { name: 'n'.repeat(length) } },
        'payload.name',
        new RegExp(`^payload.name must be at most ${MAX_ROUTINE_NAME_LENGTH} characters`),
      );
    }
    assert.equal(sim.requests.length, 0, 'a request was made');
    assert.equal(sim.state.serviceRoutines[0].name, 'Daily maintenance');
  });

  it(`a name of ${MAX_ROUTINE_NAME_LENGTH} characters is written and read back`, async function () {
    const loaded = await load({});
    const out = await loaded.run({ routineId: 1, payload: { name: 'n'.repeat(MAX_ROUTINE_NAME_LENGTH) } });
    assert.equal((out.payload as { name: string }).name.length, MAX_ROUTINE_NAME_LENGTH);
  });
});
