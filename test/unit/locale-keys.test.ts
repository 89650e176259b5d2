// Every message key the code uses names a text of the en-US catalogue: a missing one shows as the bare key
// ("lh-answer-page.errors.clash") in a status, the log, a dialog or the debug sidebar (issue 32.7).
import assert from 'assert';
import fs from 'fs';
import path from 'path';

const root = path.resolve(__dirname, '..', '..');
const SRC = path.join(root, 'src');
const NODES = path.join(SRC, 'nodes');

type Catalogue = Record<string, unknown>;

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'locales' ? [] : filesUnder(full, keep);
    return keep(full) ? [full] : [];
  });
}

/** Every node's en-US catalogue (its texts under its type) and the shared one (`common.*`). */
function catalogue(): Catalogue {
  const all: Catalogue = { common: JSON.parse(fs.readFileSync(path.join(NODES, 'shared', 'common.json'), 'utf8')) };
  for (const type of fs.readdirSync(NODES)) {
    const file = path.join(NODES, type, 'locales', 'en-US', `${type}.json`);
    if (fs.existsSync(file)) Object.assign(all, JSON.parse(fs.readFileSync(file, 'utf8')) as Catalogue);
  }
  return all;
}

function textOf(all: Catalogue, key: string): unknown {
  return key.split('.').reduce<unknown>((o, part) => (o && typeof o === 'object' ? (o as Catalogue)[part] : undefined), all);
}

interface Use {
  file: string;
  key: string;
}

/** The keys named in one source text (`type` is the node folder it is in, for the keys relative to it). */
export function keysUsed(source: string, type: string | undefined): string[] {
  const keys: string[] = [];
  // a full key in a string or an attribute: 'lh-answer-page.errors.clash', data-i18n="[placeholder]lh-x.hint.y"
  for (const m of source.matchAll(/['"`\]](lh-[a-z-]+\.[A-Za-z]\w*(?:\.\w+)+)['"`]/g)) keys.push(m[1]);
  // the editor's text(node, 'errors.x'): relative to the node's own type
  if (type) for (const m of source.matchAll(/\btext\(\s*\w+\s*,\s*'([A-Za-z]\w*(?:\.\w+)*)'/g)) keys.push(`${type}.${m[1]}`);
  // a status key without a dot is a shared one: status.ok('done') is common.status.done
  for (const m of source.matchAll(/\bstatus\.(?:ok|warn|idle|busy)\(\s*'(\w+)'/g)) keys.push(`common.status.${m[1]}`);
  return keys;
}

/**
 * Keys built from a variable: each place is listed here with every value it can take (a new place fails the test
 * below until it is listed, so a new key cannot slip past the scan).
 */
const BUILT: Record<string, { site: RegExp; keys: string[] }> = {
  'src/nodes/lh-server/editor.ts': {
    site: /text\(this, 'errors\.' \+ found\)/,
    keys: ['url', 'userinfo', 'query', 'insecureB'].map((k) => `lh-server.errors.${k}`),
  },
  'src/nodes/lh-run/lh-run.ts': {
    site: /status\.busy\(`lh-run\.status\.\$\{phase\}`\)/,
    // every phase of the start, read from its type
    keys: [
      ...(
        /export type StartPhase = ([^;]+);/.exec(fs.readFileSync(path.join(NODES, 'lh-run', 'start-run.ts'), 'utf8'))?.[1] ?? ''
      ).matchAll(/'(\w+)'/g),
    ].map((m) => `lh-run.status.${m[1]}`),
  },
};

function allUses(): Use[] {
  const uses: Use[] = [];
  for (const file of filesUnder(SRC, (f) => /\.(ts|html)$/.test(f))) {
    const rel = path.relative(root, file).split(path.sep).join('/');
    const type = /^src\/nodes\/(lh-[a-z-]+)\//.exec(rel)?.[1];
    for (const key of keysUsed(fs.readFileSync(file, 'utf8'), type)) uses.push({ file: rel, key });
    for (const key of BUILT[rel]?.keys ?? []) uses.push({ file: rel, key });
  }
  return uses;
}

describe('message keys (en-US catalogue)', function () {
  const all = catalogue();
  const uses = allUses();

  it('the scan finds the keys it is meant to (one of each kind)', function () {
    const found = new Set(uses.map((u) => u.key));
    for (const key of [
      'lh-answer-page.errors.clash',
      'lh-answer-page.errors.noHttp',
      'lh-answer-page.hint.publicUrl',
      'lh-error-policy.rule.addStep',
      'lh-server.errors.insecureB',
      'common.status.done',
      'lh-run.status.confirming',
    ])
      assert.ok(found.has(key), `the scan missed ${key}`);
    assert.ok(uses.filter((u) => /\.errors\./.test(u.key)).length >= 40, 'fewer errors.* keys than the code uses');
  });

  it('every key the code uses (errors.* and the others) is a text in en-US', function () {
    const missing = uses.filter((u) => typeof textOf(all, u.key) !== 'string').map((u) => `${u.file}: ${u.key}`);
    assert.deepStrictEqual([...new Set(missing)], []);
  });

  it('keys built from a variable are only those listed here, with all their values', function () {
    const sites = filesUnder(SRC, (f) => /\.ts$/.test(f)).flatMap((file) => {
      const rel = path.relative(root, file).split(path.sep).join('/');
      const source = fs.readFileSync(file, 'utf8');
      // a key put together from a variable: 'errors.' + x, `lh-x.errors.${x}`, `lh-x.status.${x}`
      return /'errors\.'\s*\+|`errors\.\$\{|`lh-[\w-]+\.\w+\.\$\{/.test(source) ? [rel] : [];
    });
    assert.deepStrictEqual(sites.sort(), Object.keys(BUILT).sort(), 'a key built from a variable: list it in BUILT');
    assert.ok(BUILT['src/nodes/lh-run/lh-run.ts'].keys.length >= 5, 'the phases of a start were read');
    for (const [file, { site }] of Object.entries(BUILT))
      assert.match(fs.readFileSync(path.join(root, file), 'utf8'), site, `${file} builds its key another way now`);
  });

  it('the scan reads a missing key as missing (a catalogue without it fails)', function () {
    const without = JSON.parse(JSON.stringify(all)) as Catalogue;
    delete ((without['lh-answer-page'] as Catalogue).errors as Catalogue).clash;
    const source = "RED._('lh-answer-page.errors.clash', { path })";
    const missing = keysUsed(source, 'lh-answer-page').filter((k) => typeof textOf(without, k) !== 'string');
    assert.deepStrictEqual(missing, ['lh-answer-page.errors.clash']);
  });
});
