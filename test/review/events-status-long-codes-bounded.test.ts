/**
 * Review finding (review46, lh-events under a flood): lh-events shows the code of each event in its status, and the
 * status texts of every node are cached by the values they are made from (up to 500 texts, for the life of
 * Node-RED). An instrument pushing frames with long codes (each frame under the 1 MiB cap) filled that cache with
 * its codes: 500 codes of 100 KiB held about 100 MB, 500 of 1 MiB about a gigabyte. Now a text made from values
 * longer than 1 KiB is not cached, and is shown clipped to 200 characters after redaction (a secret cut in half
 * would not be recognised). Measured on the Status of the node folders with a collected heap: the test helper's
 * spies in a loaded flow keep every msg sent, which would hide it.
 */
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';

import type { Node, Red } from '../../src/nodes/shared/node-red';
import { Status } from '../../src/nodes/shared/status';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

describe('review: status texts made from long event codes are bounded', function () {
  this.timeout(60000);

  it('600 statuses of distinct 100 KiB codes keep no memory, and each is clipped to 200 characters, redacted', function () {
    const shown: string[] = [];
    const RED = { _: (key: string, subs?: Record<string, unknown>) => `event: ${String(subs?.code ?? key)}` } as unknown as Red;
    const node = { status: (s: { text?: string }) => shown.push(String(s.text ?? '')) } as unknown as Node;
    const status = new Status(node, RED);
    const filler = 'x'.repeat(100 * 1024);
    const before = heapMb();
    for (let i = 0; i < 600; i++) status.ok('lh-events.status.event', { code: `c${i} password=hunter2 ${filler}` });
    const grown = heapMb() - before;
    assert.ok(grown < 20, `the heap grew by ${grown.toFixed(0)} MB and stays so`);
    assert.equal(shown.length, 600);
    assert.ok(
      shown.every((t) => t.length <= 200),
      `a status of ${Math.max(...shown.map((t) => t.length))} characters`,
    );
    assert.ok(shown.every((t) => t.includes('password=***') && !t.includes('hunter2')));
  });
});
