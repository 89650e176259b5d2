import fs from 'fs';
import path from 'path';

const root = path.resolve(__dirname, '..', '..');

/**
 * Where the example flows live: `examples/` is what Node-RED lists under Import > Examples (only core nodes and this
 * package, so importing one never stops a Node-RED); `examples-extra/` holds those that need another package (their
 * titles say which), imported from a file as the README tells.
 */
export const EXAMPLE_DIRS = ['examples', 'examples-extra'] as const;

export interface ExampleFile {
  /** the folder under the package root */
  dir: (typeof EXAMPLE_DIRS)[number];
  /** the file name */
  file: string;
  /** the full path */
  full: string;
}

/** Every example file of the given folders (all by default), sorted by file name. */
export function exampleFilesIn(dirs: readonly (typeof EXAMPLE_DIRS)[number][] = EXAMPLE_DIRS): ExampleFile[] {
  return dirs
    .flatMap((dir) => {
      const at = path.join(root, dir);
      if (!fs.existsSync(at)) return [];
      return fs
        .readdirSync(at)
        .filter((f) => f.endsWith('.json'))
        .map((file) => ({ dir, file, full: path.join(at, file) }));
    })
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/** The one example file (of either folder) whose name starts with `prefix`. */
export function exampleFile(prefix: string): ExampleFile {
  const found = exampleFilesIn().filter((f) => f.file.startsWith(prefix));
  if (found.length !== 1) throw new Error(`${found.length} example files named ${prefix}* in ${EXAMPLE_DIRS.join(', ')}`);
  return found[0];
}
