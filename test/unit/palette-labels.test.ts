import assert from 'assert';
import fs from 'fs';
import path from 'path';

import { helveticaWidth, PALETTE_LINE_PX } from '../support/palette-metrics';

const NODES = path.join(__dirname, '..', '..', 'src', 'nodes');

/** Every node's palette label, from its English locale file. */
function paletteLabels(): { type: string; label: string }[] {
  return fs
    .readdirSync(NODES)
    .filter((d) => d.startsWith('lh-'))
    .map((type) => {
      const file = path.join(NODES, type, 'locales', 'en-US', `${type}.json`);
      const texts = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, { paletteLabel?: string }>;
      return { type, label: texts[type]?.paletteLabel ?? '' };
    });
}

describe('palette labels', function () {
  it('every node has one, and each fits on one line of the palette in the editor fonts (Helvetica/Arial metrics)', function () {
    const labels = paletteLabels();
    assert.ok(labels.length >= 19, `found ${labels.length} nodes`);
    assert.deepStrictEqual(
      labels.filter((l) => l.label === '').map((l) => l.type),
      [],
      'nodes without a palette label',
    );
    // config nodes are not in the palette; lh-server's long label is its config-node list label
    const wide = labels
      .filter((l) => l.type !== 'lh-server' && l.type !== 'lh-coordination')
      .filter((l) => helveticaWidth(l.label) >= PALETTE_LINE_PX)
      .map((l) => `${l.label} (${helveticaWidth(l.label).toFixed(1)} px)`);
    assert.deepStrictEqual(wide, [], `labels Node-RED breaks into two lines at ${PALETTE_LINE_PX} px`);
  });

  it('the metrics agree with what Node-RED wraps: a label known to wrap is measured as too wide', function () {
    // "submit recovery" and "websocket out" wrap in Node-RED's own palette; "http request" fits
    assert.ok(helveticaWidth('submit recovery') >= PALETTE_LINE_PX);
    assert.ok(helveticaWidth('websocket out') >= PALETTE_LINE_PX);
    assert.ok(helveticaWidth('http request') < PALETTE_LINE_PX);
  });
});
