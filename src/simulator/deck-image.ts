/**
 * The simulated deck camera's picture, drawn in code (node:zlib only): a deck of 12 positions in 3 rows, lit by the
 * deck lights, with plates on it while a run is in progress and a red frame around the position of a pending error.
 */
import { deflateSync } from 'zlib';

export const DECK_COLUMNS = 4;
export const DECK_ROWS = 3;
export const DECK_POSITIONS = DECK_COLUMNS * DECK_ROWS;
const WIDTH = 192;
const HEIGHT = 128;

export interface DeckPicture {
  /** the light on the deck, 0..255 per channel */
  light: { red: number; green: number; blue: number; white: number };
  /** positions (1-based) with a plate on them */
  plates: number[];
  /** the position (1-based) of a pending error, framed in red */
  errorAt?: number;
}

type Rgb = [number, number, number];

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An 8-bit RGB PNG of `pixels` (width × height × 3 bytes, row by row). */
export function encodePng(width: number, height: number, pixels: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) pixels.copy(raw, y * (width * 3 + 1) + 1, y * width * 3, (y + 1) * width * 3);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Where position p (1-based) lies: column, row, and its rectangle in pixels. */
export function positionBox(p: number): { x: number; y: number; w: number; h: number } {
  const col = (p - 1) % DECK_COLUMNS;
  const row = Math.floor((p - 1) / DECK_COLUMNS);
  const w = Math.floor(WIDTH / DECK_COLUMNS);
  const h = Math.floor(HEIGHT / DECK_ROWS);
  return { x: col * w + 4, y: row * h + 4, w: w - 8, h: h - 8 };
}

function lit(base: Rgb, light: DeckPicture['light']): Rgb {
  const scale = (c: number, l: number): number => Math.min(255, Math.round((c * (l + light.white)) / 255 / 1.2 + 20));
  return [scale(base[0], light.red), scale(base[1], light.green), scale(base[2], light.blue)];
}

const cache = new Map<string, Buffer>();

/** The picture as PNG bytes (the same state gives the same bytes; a few states are kept). */
export function deckPng(picture: DeckPicture): Buffer {
  const key = JSON.stringify(picture);
  const known = cache.get(key);
  if (known) return known;
  const pixels = Buffer.alloc(WIDTH * HEIGHT * 3);
  const fill = (x0: number, y0: number, w: number, h: number, rgb: Rgb): void => {
    for (let y = Math.max(0, y0); y < Math.min(HEIGHT, y0 + h); y++) {
      for (let x = Math.max(0, x0); x < Math.min(WIDTH, x0 + w); x++) pixels.set(rgb, (y * WIDTH + x) * 3);
    }
  };
  fill(0, 0, WIDTH, HEIGHT, lit([120, 120, 115], picture.light));
  for (let p = 1; p <= DECK_POSITIONS; p++) {
    const b = positionBox(p);
    fill(b.x, b.y, b.w, b.h, lit([170, 170, 165], picture.light));
    if (picture.plates.includes(p)) fill(b.x + 4, b.y + 4, b.w - 8, b.h - 8, lit([60, 110, 200], picture.light));
  }
  if (picture.errorAt !== undefined && picture.errorAt >= 1 && picture.errorAt <= DECK_POSITIONS) {
    const b = positionBox(picture.errorAt);
    const red: Rgb = [230, 20, 20];
    fill(b.x - 3, b.y - 3, b.w + 6, 3, red);
    fill(b.x - 3, b.y + b.h, b.w + 6, 3, red);
    fill(b.x - 3, b.y, 3, b.h, red);
    fill(b.x + b.w, b.y, 3, b.h, red);
  }
  const png = encodePng(WIDTH, HEIGHT, pixels);
  if (cache.size >= 32) cache.delete(cache.keys().next().value as string);
  cache.set(key, png);
  return png;
}
