/**
 * Review finding (audit lock): a chain whose lock names another writer is refused with a message that names the
 * writer as the lock file says it (`<pid>@<host> <token>`). The lock file's text went into the message unclipped and
 * as it was: a lock file someone wrote megabytes into made a megabyte message (in the log, the node's status, Catch),
 * and its line breaks, escape sequences or bidi overrides reached the log as they were (a forged log line, a
 * terminal's colours). What comes from the file is at most 200 whole characters now, each control or format
 * character shown as U+FFFD.
 */
import assert from 'assert';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { AuditLog, type RecordFields } from '../../src/audit';
import { KEY, tempDir } from '../audit/chain-support';

const intent = (id: string): RecordFields => ({
  phase: 'intent',
  id,
  at: new Date().toISOString(),
  instrument: 'i',
  who: {},
  what: { api: 'A', method: 'PUT', operation: 'clear-errors', path: '/errors/clear-errors' },
});

/** Control and format characters (a line break, ESC, a bidi override) and lone surrogate halves. */
const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;

describe('review: an audit lock file holding megabytes and control characters', function () {
  let dir: string;
  beforeEach(function () {
    dir = tempDir();
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const junk = `\n2026-01-01 [info] forged line\u001b[31m\u202e\u2028${'\u{1f9ea}'.repeat(100)}${'x'.repeat(2 * 1024 * 1024)}`;
  for (const [what, lock, names] of [
    ['of another host', `12345@other-host\u001b[2J${junk}`, /by process 12345@other-host\ufffd.*of the host other-host\ufffd/],
    ['of this host, a live process', `${process.ppid}@${os.hostname()} ${junk}`, new RegExp(`by process ${process.ppid}@`)],
    ['naming no writer', junk, /names no writer \("2026-01-01 \[info\] forged line\ufffd/],
  ] as const) {
    it(`a lock ${what}: the refusal holds at most 200 characters of it and no control character`, async function () {
      fs.writeFileSync(path.join(dir, 'one.lock'), lock);
      const log = new AuditLog({ dir, name: 'one', instrument: 'i', key: KEY });
      const err = await log.append(intent('a')).then(
        () => assert.fail('the chain was taken though another writer holds its lock'),
        (e: Error) => e,
      );
      await log.close();
      assert.match(err.message, names);
      assert.ok(err.message.length < 1500, `a message of ${err.message.length} characters`);
      assert.doesNotMatch(err.message, UNSHOWABLE, JSON.stringify(err.message.slice(0, 300)));
      assert.ok(!err.message.includes('forged line\n') && !err.message.includes('\n'));
      assert.strictEqual(fs.readFileSync(path.join(dir, 'one.lock'), 'utf8'), lock, 'the lock is left as it was');
    });
  }
});
