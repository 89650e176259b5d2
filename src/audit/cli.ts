#!/usr/bin/env node
/**
 * lh-audit: checks and exports the audit chains the package writes.
 *   lh-audit verify FILE [--key TEXT | --key-file FILE] [--json]   exit 0 intact, 1 tampered, 2 usage or read error
 *   lh-audit export FILE [--out FILE.csv]                          the records as CSV (stdout by default)
 * FILE is any file of a chain (<name>.NNNNNN.jsonl): the whole chain beside it is read, with its checkpoint.
 */
import fs from 'fs';
import { parseArgs } from 'util';
import { describeReport, verifyChain } from './verify';
import { expandChain } from './files';
import { parseRecords, toCsv } from './export';

const USAGE = `usage:
  lh-audit verify FILE [--key TEXT | --key-file FILE] [--json]
  lh-audit export FILE [--out FILE.csv]
FILE: a chain file (lh-audit-*.000001.jsonl in <userDir>/lh-audit); the key signs the checkpoint
(settings.js lhAudit.key, or the file lh-audit.key beside the chains).`;

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      key: { type: 'string' },
      'key-file': { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, file] = positionals;
  if (values.help || !command || !file || (command !== 'verify' && command !== 'export')) {
    console.error(USAGE);
    return 2;
  }
  const { files, checkpoint } = expandChain(file);
  if (files.length === 0 || !files.every((f) => fs.existsSync(f))) {
    console.error(`lh-audit: ${file}: no such chain file`);
    return 2;
  }
  const texts = files.map((name) => ({ name, text: fs.readFileSync(name, 'utf8') }));
  if (command === 'export') {
    const csv = toCsv(texts.flatMap((t) => parseRecords(t.text)));
    if (values.out) fs.writeFileSync(values.out, csv);
    else process.stdout.write(csv);
    return 0;
  }
  const keyText = values.key ?? (values['key-file'] ? fs.readFileSync(values['key-file'], 'utf8').trim() : undefined);
  const report = verifyChain({
    files: texts,
    checkpoint: checkpoint ? fs.readFileSync(checkpoint, 'utf8') : undefined,
    key: keyText === undefined ? undefined : Buffer.from(keyText, 'utf8'),
  });
  console.log(values.json ? JSON.stringify(report, null, 2) : describeReport(report));
  return report.ok ? 0 : 1;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (err) {
  console.error(`lh-audit: ${(err as Error).message}`);
  process.exitCode = 2;
}
