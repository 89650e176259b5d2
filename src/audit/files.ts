import { constants } from 'buffer';
import fs from 'fs';
import path from 'path';

/** The chain of one instrument: `<name>.000001.jsonl`, `<name>.000002.jsonl`, ... and `<name>.checkpoint.json`. */
export const FILE_PATTERN = /^(.*)\.(\d{6})\.jsonl$/;

export function chainFile(dir: string, name: string, index: number): string {
  return path.join(dir, `${name}.${String(index).padStart(6, '0')}.jsonl`);
}

export function checkpointFile(dir: string, name: string): string {
  return path.join(dir, `${name}.checkpoint.json`);
}

/** The indexes of a chain's files found in `dir`, in order. */
export function chainIndexes(dir: string, name: string): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const entry of entries) {
    const m = FILE_PATTERN.exec(entry);
    if (m && m[1] === name) out.push(Number(m[2]));
  }
  return out.sort((a, b) => a - b);
}

/**
 * The files a user names, each expanded to its whole chain: `x.000003.jsonl` stands for every `x.NNNNNN.jsonl`
 * beside it, so that a verify always starts at the chain's first file.
 */
export function expandChain(given: string): { files: string[]; checkpoint?: string } {
  const m = FILE_PATTERN.exec(path.basename(given));
  if (!m) return { files: [given] };
  const dir = path.dirname(given);
  const files = chainIndexes(dir, m[1]).map((i) => chainFile(dir, m[1], i));
  const cp = checkpointFile(dir, m[1]);
  return { files, checkpoint: fs.existsSync(cp) ? cp : undefined };
}

/** A file-system-safe chain name for an instrument: readable host part and a short digest of the full key. */
export function chainName(instrument: string, digest: string): string {
  const readable = instrument
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/[^A-Za-z0-9.-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60);
  return `lh-audit-${readable || 'instrument'}-${digest.slice(0, 10)}`;
}

/**
 * A file of a chain (a chain file, its checkpoint) as text, read whole. One larger than any string V8 makes (about 512
 * MiB) is refused by its size, before it is read: the package never writes one (lhAudit.maxFileBytes is at most 256
 * MiB), and reading it only to fail would hold it all in memory and say nothing of the file.
 */
export function readChainText(file: string): string {
  const size = fs.statSync(file).size;
  if (size > constants.MAX_STRING_LENGTH) {
    throw new Error(
      `${file} is ${size} bytes: larger than any file of an audit chain (they start anew at lhAudit.maxFileBytes, at most 256 MiB) and than can be read as text; not read`,
    );
  }
  return fs.readFileSync(file, 'utf8');
}
