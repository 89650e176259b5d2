#!/usr/bin/env node
/**
 * lh-audit: checks and exports the audit chains the package writes.
 *   lh-audit verify FILE|REDIS-URL [--key TEXT | --key-file FILE] [--json]   exit 0 intact and signed, 1 tampered or
 *   records declared missing, 2 usage or read error, 3 intact but not authenticated (checkpoint unsigned, absent, or
 *   no key given)
 *   lh-audit export FILE|REDIS-URL [--out FILE.csv]                          the records as CSV (stdout by default)
 * FILE is any file of a chain (<name>.NNNNNN.jsonl): the whole chain beside it is read, with its checkpoint.
 * REDIS-URL names the Redis of an lh-coordination group: redis://host:6379/0?prefix=labwire&instrument=ID (every
 * instrument's chain under the prefix without instrument=). Its password is never printed.
 */
import { once } from 'events';
import fs from 'fs';
import path from 'path';
import { parseArgs } from 'util';

import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';

import { sha256Hex } from './canonical';
import { csvHeader, csvRowsOf, parseRecords } from './export';
import { chainName, expandChain, FILE_PATTERN, readChainText } from './files';
import { readKey, STREAM_PAGE, streamCsvRows, streamSnapshot, verifyRedisChain } from './redis-chain';
import {
  connectSource,
  isRedisUrl,
  openSource,
  parseRedisSource,
  type RedisSource,
  safeRedisUrl,
  sourceStreams,
} from './redis-source';
import { authenticated, describeReport, verifyChain, verifyExitCode, type VerifyInput, type VerifyReport } from './verify';

const USAGE = `usage:
  lh-audit verify FILE|REDIS-URL [--key TEXT | --key-file FILE] [--json]
  lh-audit export FILE|REDIS-URL [--out FILE.csv]
verify exits 0 when the chain is intact and its signed checkpoint checked with the key,
1 when it was tampered with or records are declared missing (TAMPERED / INCOMPLETE: a chain file lost, or Redis lost
its data; the records around the gap verify), 2 on a usage or read error, 3 when it is intact but not authenticated
(checkpoint unsigned or absent, or no key given: a chain rewritten whole by someone able to write it would pass the
hash checks). --json
prints the report; its "authenticated" is true only for exit 0.
FILE: a chain file (lh-audit-*.000001.jsonl in <userDir>/lh-audit); the key signs the checkpoint
(settings.js lhAudit.key, or the file lh-audit.key beside the chains).
REDIS-URL: the chains shared by several Node-REDs (lh-coordination), in Redis:
  redis[s]://[user:password@]host[:port][/db]?prefix=PREFIX[&instrument=ID]
  PREFIX is the lh-coordination key prefix (default labwire); ID is the instrument's 24-hex id (the {...} part of
  its keys) or its identity "<A URL>|<B URL>"; without instrument= every chain under the prefix is read.
  The password may come from LH_AUDIT_REDIS_PASSWORD instead of the URL; it is never printed.
  The key is lhAudit.key / lhAudit.keyFile of settings.js (the same on every Node-RED).`;

function keyOf(values: { key?: string; 'key-file'?: string }): Buffer | undefined {
  const keyText = values.key ?? (values['key-file'] ? fs.readFileSync(values['key-file'], 'utf8').trim() : undefined);
  return keyText === undefined ? undefined : Buffer.from(keyText, 'utf8');
}

/** The exit code of several chains: tampered (1) before not authenticated (3) before intact and signed (0). */
function worstExitCode(reports: VerifyReport[]): number {
  const codes = reports.map(verifyExitCode);
  return codes.includes(1) ? 1 : codes.includes(3) ? 3 : 0;
}

/**
 * Writes to the file `fd`, or to stdout (a pipe is written asynchronously: each piece waits until the ones before it
 * drained, so an export holds one file's or one page's rows at a time).
 */
async function writeOut(fd: number | undefined, text: string): Promise<void> {
  if (fd !== undefined) fs.writeSync(fd, text);
  else if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/** verify / export of the chains in a Redis (one instrument, or all under the prefix). */
async function fromRedis(
  command: 'verify' | 'export',
  source: RedisSource,
  values: { key?: string; 'key-file'?: string; out?: string; json?: boolean },
): Promise<number> {
  const first = connectSource(source);
  let refused: Error | undefined;
  first.on('error', (err: Error) => (refused ??= err));
  let redis: Redis | Cluster = first;
  try {
    await first.connect().catch((err: Error) => {
      // ioredis rejects with "Connection is closed."; the reason is the connection's own error
      throw new Error(`cannot connect to Redis at ${source.host}:${source.port} (${(refused ?? err).message})`);
    });
    redis = await openSource(first, source);
    const streams = await sourceStreams(redis, source);
    // each chain as one moment saw it (its last entry and checkpoint), then read a page at a time: never held whole
    const present = [];
    for (const keys of streams) {
      const snapshot = await streamSnapshot(redis, keys);
      // a head left alone (its stream and checkpoint deleted) still says records were there: read, it is TAMPERED
      const empty = snapshot.end === undefined && snapshot.checkpoint === undefined;
      if (!empty || (await readKey(redis, keys.head, 'a string', () => redis.get(keys.head))) !== null)
        present.push({ keys, snapshot });
    }
    if (present.length === 0) {
      console.error(
        `lh-audit: no audit chain under the prefix ${source.prefix}${source.instrument ? ` for ${source.instrument}` : ''}`,
      );
      return 2;
    }
    if (command === 'export') {
      // every record parsed before anything is written: a line that is not a record exports nothing (exit 2)
      for (const c of present) for await (const rows of streamCsvRows(redis, c.keys, c.snapshot)) void rows;
      const fd = values.out ? fs.openSync(values.out, 'w') : undefined;
      try {
        await writeOut(fd, `${csvHeader()}\n`);
        for (const c of present) for await (const rows of streamCsvRows(redis, c.keys, c.snapshot)) await writeOut(fd, rows);
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
      return 0;
    }
    const key = keyOf(values);
    const reports = [];
    for (const c of present) {
      const report = await verifyRedisChain(redis, c.keys, key, STREAM_PAGE, c.snapshot);
      reports.push({ stream: c.keys.stream, ...report, authenticated: authenticated(report) });
    }
    if (values.json) console.log(JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2));
    else for (const r of reports) console.log(`${r.stream}:\n${describeReport(r)}`);
    return worstExitCode(reports);
  } finally {
    redis.disconnect();
  }
}

/**
 * Whose chain a file is, by its name as the package gives it (`lh-audit-<host>-<digest of the instrument>`); a chain
 * renamed otherwise (an archive) names nobody.
 */
function fileChainOwner(file: string): VerifyInput['owner'] {
  const name = FILE_PATTERN.exec(path.basename(file))?.[1];
  if (name === undefined || !/^lh-audit-.*-[0-9a-f]{10}$/.test(name)) return undefined;
  return { what: `the chain ${name}`, is: (instrument) => chainName(instrument, sha256Hex(instrument)) === name };
}

async function main(argv: string[]): Promise<number> {
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
  if (isRedisUrl(file)) {
    const source = parseRedisSource(file);
    try {
      return await fromRedis(command, source, values);
    } catch (err) {
      // a connection error names host and port, never the password; taken out anyway
      const text = (err as Error).message;
      const safe = source.password ? text.split(source.password).join('…') : text;
      console.error(`lh-audit: ${safeRedisUrl(file.split('?')[0])}: ${safe}`);
      return 2;
    }
  }
  // the checkpoint before the files are listed: a live chain's writer moves it only to records already in files, and
  // read after the listing it may name a record of a file the writer started meanwhile (TAMPERED, of an honest chain)
  const checkpointPath = command === 'verify' ? expandChain(file).checkpoint : undefined;
  const checkpointText = checkpointPath ? readChainText(checkpointPath) : undefined;
  const { files } = expandChain(file);
  if (files.length === 0 || !files.every((f) => fs.existsSync(f))) {
    console.error(`lh-audit: ${file}: no such chain file`);
    return 2;
  }
  // one file in memory at a time: a chain of years is many files of up to 64 MiB
  if (command === 'export') {
    // every file parsed before anything is written: a line that is not a record exports nothing (exit 2)
    for (const name of files) parseRecords(readChainText(name), name);
    const fd = values.out ? fs.openSync(values.out, 'w') : undefined;
    try {
      await writeOut(fd, `${csvHeader()}\n`);
      for (const name of files) await writeOut(fd, csvRowsOf(readChainText(name), name));
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    return 0;
  }
  const report = verifyChain({
    files: files.map((name) => ({ name, read: () => readChainText(name) })),
    checkpoint: checkpointText,
    key: keyOf(values),
    owner: fileChainOwner(files[0]),
  });
  console.log(
    values.json ? JSON.stringify({ ...report, authenticated: authenticated(report) }, null, 2) : describeReport(report),
  );
  return verifyExitCode(report);
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`lh-audit: ${safeRedisUrl((err as Error).message)}`);
    process.exitCode = 2;
  },
);
