/**
 * The instrument homes (src/instrument) of the runtime under test: the compiled module the runtime loaded, not the
 * ts-node copy a test file imports. `restartMemory()` forgets every home, as a restart of Node-RED does.
 */
import path from 'path';

const homes = require(path.resolve(__dirname, '..', '..', 'nodes', 'instrument', 'homes.js')) as { resetHomes(): void };

/** What a restart of Node-RED does to this process's memory of its instruments (answers, seen errors, run memory...). */
export function restartMemory(): void {
  homes.resetHomes();
}
