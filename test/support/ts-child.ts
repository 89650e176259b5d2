/** The arguments of a `node` child process that runs a TypeScript file of the tests. */
import path from 'path';

const PREFER_BUILT = path.join(__dirname, 'prefer-built.ts');

/**
 * `node -r ts-node/register/transpile-only -r prefer-built.ts <file> <args>`: ts-node for the file (and the tests'
 * support it imports), the compiled package for what it imports from src/ when the build is current (prefer-built.ts).
 * `preload`: more modules to preload before the file.
 */
export function tsChildArgs(file: string, args: readonly string[] = [], preload: readonly string[] = []): string[] {
  return ['-r', 'ts-node/register/transpile-only', '-r', PREFER_BUILT, ...preload.flatMap((p) => ['-r', p]), file, ...args];
}
