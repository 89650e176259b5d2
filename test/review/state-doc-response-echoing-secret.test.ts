/**
 * fix48 (found beside item 4): the state document (lh-state, retained on an MQTT broker) lists each A error's
 * responses whole, so that a fleet tab can offer them. Its titles pass the redaction step; its responses did not: an
 * instrument that echoed a secret into a response name (`Retry password=hunter2`) sent it to the broker, retained for
 * every subscriber. Such a response is left out of the document now (the answer page offers it, with its label
 * redacted); every other response stays, in order. Seeded over response lists with and without echoed secrets.
 */
import assert from 'node:assert/strict';

import { errorView } from '../../src/nodes/shared/lab-publish';
import type { PolledError } from '../../src/nodes/shared/poll-messages';
import { Rng } from '../support/prng';

const NAMES = ['password', 'token', 'api_key', 'secret', 'pin', 'passphrase'];
const PLAIN = ['Retry', 'Abort', 'Ignore', 'Skip', 'Retry with new tips', 'Continue'];

describe('review: the state document lists no response that echoes a secret', function () {
  it('leaves out exactly the responses that echo a secret, keeps the others in order (seed 4805, 200 cases)', function () {
    const rng = new Rng(4805);
    for (let i = 0; i < 200; i++) {
      const secrets: string[] = [];
      const responses = Array.from({ length: rng.int(1, 5) }, (_, j) => {
        const plain = `${PLAIN[rng.below(PLAIN.length)]} ${j}`;
        if (rng.next() < 0.6) return plain;
        const secret = `S3cr3t${i}x${rng.int(1000, 9999)}`;
        secrets.push(secret);
        const sep = rng.next() < 0.5 ? '=' : ': ';
        return `${plain} ${NAMES[rng.below(NAMES.length)]}${sep}${secret}`;
      });
      const record = {
        id: `e${i}`,
        title: 'Clot',
        severity: 'Error',
        errorResponses: responses.map((response) => ({ response })),
      } as unknown as PolledError;
      const view = errorView('A', record);
      const said = JSON.stringify(view);
      for (const secret of secrets) assert.ok(!said.includes(secret), `case ${i}: ${said}`);
      assert.deepEqual(
        view.responses ?? [],
        responses.filter((r) => !secrets.some((s) => r.includes(s))),
        `case ${i}`,
      );
    }
  });
});
