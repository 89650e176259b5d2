/**
 * Preloaded (after ts-node) into the child processes tests start from a TypeScript file (tsChildArgs in ts-child.ts):
 * what such a child imports from src/ is loaded from the compiled package in nodes/ (`node scripts/build.js`, which
 * `npm test` runs first) when that build is up to date with every source file; else from src/ through ts-node, as
 * before. Transpiling the package's modules took a child about 1.3 s of CPU against 0.1 s for the compiled ones: at the
 * load of a CI run (2 cores, load 15) that was 10 to 20 s a child, and a test starting four of them came within
 * seconds of its timeout (review84). The child runs the same code either way: the build is that of these sources.
 */
import fs from 'fs';
import Module from 'module';
import path from 'path';

const ROOT = path.resolve(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');
const BUILT = path.join(ROOT, 'nodes');

/** Sources the build leaves out (tsconfig.build.json): the editor's, which no child imports. */
function compiled(relative: string): boolean {
  const parts = relative.split(path.sep);
  if (parts[0] === 'editor') return false;
  return !(parts.length === 3 && parts[0] === 'nodes' && parts[2] === 'editor.ts');
}

/** Whether every compiled source of src/ has its .js in nodes/, written after the source last changed. */
export function buildUpToDate(dir = SRC): boolean {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!buildUpToDate(full)) return false;
      continue;
    }
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
    const relative = path.relative(SRC, full);
    if (!compiled(relative)) continue;
    const built = path.join(BUILT, relative.replace(/\.ts$/, '.js'));
    try {
      if (fs.statSync(built).mtimeMs < fs.statSync(full).mtimeMs) return false;
    } catch {
      return false; // not built
    }
  }
  return true;
}

type Resolve = (request: string, parent: unknown, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };

if (buildUpToDate()) {
  const resolve = loader._resolveFilename;
  loader._resolveFilename = function (this: unknown, request, parent, ...rest) {
    const file = resolve.call(this, request, parent, ...rest);
    const relative = path.relative(SRC, file);
    if (relative.startsWith('..') || path.isAbsolute(relative) || !file.endsWith('.ts') || !compiled(relative)) return file;
    return path.join(BUILT, relative.replace(/\.ts$/, '.js'));
  };
}
