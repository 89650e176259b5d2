/**
 * The child of redaction-secret-in-latin1-escape-or-wrapped-line-seeded.test.ts: the CPU time redactText takes over a
 * text of 32 and of 128 KiB for each secret of spaces or signs, measured 3 times each, interleaved, the least kept, in
 * a process of its own (process CPU time counts every thread of the process: in the review lane another thread's share,
 * whatever its cause, landed on the larger text). Prints one JSON line: `[{secret, small, large, plain}]` in ms.
 */
import { redactText } from '../../src/contract/redaction';
import { cpuMs } from '../support/cpu-time';

const CASES: [string, (size: number) => string][] = [
  [`${' '.repeat(40)}y`, (size) => '\n \n '.repeat(size / 4)],
  [`${' '.repeat(40)}y`, (size) => `\n${' '.repeat(size - 1)}`],
  [`a ${' '.repeat(30)}b`, (size) => 'a\r\n\r\n \n '.repeat(size / 8)],
  ['%%%%%%%%%%!', (size) => '%25'.repeat(size / 3)],
  ['ää ää ää ää!', (size) => '%E4%C3%A4 %u00e4\n '.repeat(size / 18)],
];

const results = CASES.map(([secret, textOf]) => {
  const [small, large] = [textOf(32 * 1024), textOf(128 * 1024)];
  redactText(small.slice(0, 100), [secret]); // the pattern made and compiled
  const times = { small: [] as number[], large: [] as number[] };
  for (let round = 0; round < 3; round++) {
    times.small.push(cpuMs(() => redactText(small, [secret])));
    times.large.push(cpuMs(() => redactText(large, [secret])));
  }
  const plain = Math.min(...[0, 1, 2].map(() => cpuMs(() => large.lastIndexOf('zz'))));
  return { secret, small: Math.min(...times.small), large: Math.min(...times.large), plain };
});
process.stdout.write(`${JSON.stringify(results)}\n`);
