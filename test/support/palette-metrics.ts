/**
 * How wide a palette label is in the fonts Node-RED's editor asks for ("Helvetica Neue", Arial, Helvetica): Node-RED
 * breaks a palette label into lines once a line reaches 82 px at 13 px (palette.js setLabel). Widths are Helvetica's
 * advance widths (its AFM, 1/1000 em; Arial has the same metrics), so the check does not depend on the fonts of the
 * machine that runs the tests: where only a wider fallback font (DejaVu Sans) is installed, core labels such as
 * "http response" wrap too.
 */
const HELVETICA: Record<string, number> = {};
const ROWS: [string, number][] = [
  [' !', 278],
  ['"', 355],
  ['#$', 556],
  ['%', 889],
  ['&', 667],
  ["'", 222],
  ['()', 333],
  ['*', 389],
  ['+', 584],
  [',', 278],
  ['-', 333],
  ['./', 278],
  ['0123456789', 556],
  [':;', 278],
  ['<=>', 584],
  ['?', 556],
  ['@', 1015],
  ['ABEKPSVXY', 667],
  ['CDHNRU', 722],
  ['FTZ', 611],
  ['GOQ', 778],
  ['I', 278],
  ['J', 500],
  ['L', 556],
  ['M', 833],
  ['W', 944],
  ['[\\]', 278],
  ['^', 469],
  ['_', 556],
  ['`', 222],
  ['abdeghnopqu', 556],
  ['cksvxyz', 500],
  ['ft', 278],
  ['ijl', 222],
  ['m', 833],
  ['r', 333],
  ['w', 722],
  ['{}', 334],
  ['|', 260],
  ['~', 584],
];
for (const [chars, width] of ROWS) for (const c of chars) HELVETICA[c] = width;

/** Node-RED's palette: label font size and the width at which a line is broken. */
export const PALETTE_FONT_PX = 13;
export const PALETTE_LINE_PX = 82;

/** The width of `text` in px at the palette's font size in Helvetica/Arial metrics (unknown characters count as 'm'). */
export function helveticaWidth(text: string, px = PALETTE_FONT_PX): number {
  let units = 0;
  for (const c of text) units += HELVETICA[c] ?? 833;
  return (units / 1000) * px;
}
