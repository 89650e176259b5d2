// The Flow Library's scorecard checks that need no online catalogue, and the contents of the published tarball.
// Runs after the build (npm test builds first): it inspects nodes/ as Node-RED loads it.
import assert from 'assert';
import { execFile } from 'child_process';
import fs from 'fs';
import path from 'path';

import semver from 'semver';

import { editorDefinition } from '../support/editor-definition';
import { exampleFilesIn } from '../support/example-files';

const root = path.resolve(__dirname, '..', '..');

interface PackageJson {
  name: string;
  version: string;
  license?: string;
  main?: string;
  bin?: Record<string, string>;
  repository?: { type?: string; url?: string } | string;
  keywords?: string[];
  engines?: { node?: string };
  'node-red'?: { version?: string; nodes?: Record<string, string> };
  dependencies?: Record<string, string>;
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;
const pkg = readJson<PackageJson>(path.join(root, 'package.json'));
const nodeFiles = pkg['node-red']?.nodes ?? {};
const types = Object.keys(nodeFiles);

/** The type's editor definition (its .html beside the built js). */
function editorHtml(type: string): string {
  const file = path.join(root, path.dirname(nodeFiles[type]), `${type}.html`);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}
const isConfigNode = (type: string): boolean => /category\s*:\s*["']config["']/.test(editorHtml(type));

interface PackedFile {
  path: string;
  size: number;
}

/** What `npm publish` would upload (scripts ignored: the build ran before the tests). */
function packedFiles(): Promise<PackedFile[]> {
  return new Promise((resolve, reject) => {
    execFile(
      'npm',
      ['pack', '--dry-run', '--json', '--ignore-scripts'],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`npm pack failed: ${err.message}\n${stderr}`));
        const [report] = JSON.parse(stdout) as { files: PackedFile[] }[];
        resolve(report.files);
      },
    );
  });
}

describe('package conformance (Flow Library scorecard, offline checks)', function () {
  describe('package.json', function () {
    it('has a license field and a LICENSE file with that license', function () {
      assert.ok(pkg.license, 'package.json has no license');
      const license = fs.readFileSync(path.join(root, 'LICENSE'), 'utf8');
      assert.ok(license.length > 100, 'LICENSE is empty');
      if (pkg.license === 'Apache-2.0') assert.match(license, /Apache License\s+Version 2\.0/);
      if (pkg.license === 'MIT') assert.match(license, /MIT License|Permission is hereby granted/);
    });

    it('names its git repository', function () {
      const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
      assert.match(url ?? '', /^(git\+)?https:\/\/.+\.git$|^github:\S+\/\S+$/);
    });

    it('has a scoped name and the node-red keyword', function () {
      assert.match(pkg.name, /^@[a-z0-9-~][a-z0-9-._~]*\/node-red-[a-z0-9-._~]+$/);
      assert.ok(
        pkg.keywords?.includes('node-red'),
        'the "node-red" keyword is missing: the Flow Library only lists packages with it',
      );
    });

    it('declares a node-red.version range that the tested Node-RED versions (4.x and the oldest, 3.1) satisfy', function () {
      const range = pkg['node-red']?.version;
      assert.ok(range && semver.validRange(range), `node-red.version is missing or not a range: ${range}`);
      for (const runtime of ['node-red', 'node-red-3']) {
        const { version } = readJson<{ version: string }>(require.resolve(`${runtime}/package.json`));
        assert.ok(semver.satisfies(version, range), `${runtime} ${version} is outside node-red.version ${range}`);
      }
      // The range's lower bound is what the node tests run against a second time (npm run test:nr3).
      const oldest = readJson<{ version: string }>(require.resolve('node-red-3/package.json')).version;
      assert.strictEqual(semver.minVersion(range)?.major, semver.major(oldest));
      assert.strictEqual(semver.minVersion(range)?.minor, semver.minor(oldest));
    });

    it('declares engines.node, and this Node.js satisfies it', function () {
      const range = pkg.engines?.node;
      assert.ok(range && semver.validRange(range), `engines.node is missing or not a range: ${range}`);
      assert.ok(semver.satisfies(process.version, range), `${process.version} is outside engines.node ${range}`);
    });

    it('has at most 6 runtime dependencies, each on the major version that is installed and tested', function () {
      const deps = Object.entries(pkg.dependencies ?? {});
      assert.ok(deps.length <= 6, `${deps.length} dependencies: ${deps.map(([d]) => d).join(', ')}`);
      for (const [dep, range] of deps) {
        const installed = readJson<{ version: string }>(path.join(root, 'node_modules', dep, 'package.json')).version;
        assert.ok(semver.satisfies(installed, range), `${dep}: installed ${installed} is outside ${range}`);
        assert.strictEqual(
          semver.minVersion(range)?.major,
          semver.major(installed),
          `${dep}: range ${range} is not on the current major ${installed}`,
        );
      }
    });
  });

  describe('nodes', function () {
    it('registers node types named lh-* whose built js exists', function () {
      assert.ok(types.length > 0, 'package.json node-red.nodes is empty');
      for (const type of types) {
        assert.match(type, /^lh-[a-z-]+$/);
        assert.strictEqual(nodeFiles[type], `nodes/nodes/${type}/${type}.js`);
        assert.ok(fs.existsSync(path.join(root, nodeFiles[type])), `${nodeFiles[type]} is missing (npm run build)`);
      }
    });

    for (const type of types) {
      it(`${type}: editor html, help, message catalogue and icon beside its js`, function () {
        const dir = path.join(root, path.dirname(nodeFiles[type]));
        const html = editorHtml(type);
        const definition = editorDefinition(type); // runs the html's script: it registers `type`
        assert.match(html, new RegExp(`data-template-name=["']${type}["']`), `${type}.html has no edit dialog template`);

        const help = path.join(dir, 'locales', 'en-US', `${type}.html`);
        assert.ok(fs.existsSync(help), `locales/en-US/${type}.html (help) is missing`);
        assert.match(fs.readFileSync(help, 'utf8'), new RegExp(`data-help-name=["']${type}["']`));

        const catalogue = path.join(dir, 'locales', 'en-US', `${type}.json`);
        assert.ok(fs.existsSync(catalogue), `locales/en-US/${type}.json is missing`);
        assert.ok(type in readJson<Record<string, unknown>>(catalogue), `locales/en-US/${type}.json has no "${type}" section`);

        const icons = path.join(dir, 'icons');
        assert.ok(fs.existsSync(icons) && fs.readdirSync(icons).length > 0, `${type} has no icons/ beside its js`);
        if (!isConfigNode(type)) {
          const icon = definition.icon;
          assert.ok(icon, `${type}.html sets no icon`);
          if (!icon.startsWith('font-awesome/'))
            assert.ok(fs.existsSync(path.join(icons, icon)), `icon ${icon} of ${type} is not in its icons/`);
        }
      });
    }
  });

  describe('examples', function () {
    // examples/ (Import > Examples) and examples-extra/ (those needing another package)
    const files = exampleFilesIn();
    const flows = (): { file: string; nodes: Record<string, unknown>[] }[] =>
      files.map(({ file, full }) => ({ file, nodes: readJson<Record<string, unknown>[]>(full) }));

    it('are importable flows (arrays of nodes with id and type) without credentials', function () {
      assert.ok(files.length > 0, 'examples/ holds no .json flow');
      for (const { file, nodes } of flows()) {
        assert.ok(Array.isArray(nodes) && nodes.length > 0, `${file} is not a flow`);
        for (const n of nodes) {
          assert.ok(typeof n.id === 'string' && typeof n.type === 'string', `${file}: a node without id or type`);
          assert.ok(!('credentials' in n), `${file}: node ${String(n.id)} carries credentials`);
        }
      }
    });

    it('use every node type of the palette', function () {
      const used = new Set(flows().flatMap(({ nodes }) => nodes.map((n) => n.type)));
      const missing = types.filter((t) => !isConfigNode(t) && !used.has(t));
      assert.deepStrictEqual(missing, [], `no example uses: ${missing.join(', ')}`);
    });
  });

  describe('npm pack', function () {
    let files: PackedFile[] = [];
    before(async function () {
      this.timeout(60_000);
      files = await packedFiles();
    });
    const paths = (): string[] => files.map((f) => f.path);

    it('holds what Node-RED loads: every node js, its html, locales and icons, the examples, the simulator command', function () {
      const have = new Set(paths());
      const needed = [
        'package.json',
        'README.md',
        'LICENSE',
        pkg.main,
        ...Object.values(pkg.bin ?? {}),
        'nodes/simulator/certs/ca.pem',
      ];
      for (const type of types) {
        const dir = path.posix.dirname(nodeFiles[type]);
        needed.push(
          nodeFiles[type],
          `${dir}/${type}.html`,
          `${dir}/locales/en-US/${type}.html`,
          `${dir}/locales/en-US/${type}.json`,
        );
        assert.ok(
          paths().some((p) => p.startsWith(`${dir}/icons/`)),
          `${type}: no icon packed`,
        );
      }
      for (const example of exampleFilesIn()) needed.push(`${example.dir}/${example.file}`);
      const missing = needed
        .filter((p): p is string => typeof p === 'string')
        .map((p) => p.replace(/^\.\//, ''))
        .filter((p) => !have.has(p));
      assert.deepStrictEqual(missing, []);
    });

    it('holds nothing else: no sources, tests, CI, benchmarks, source maps, flows credentials or keys', function () {
      const allowed =
        /^(package\.json|README\.md|LICENSE|examples(-extra)?\/[^/]+\.json|icons\/[^/]+\.(svg|png)|nodes\/.+\.(js|d\.ts|html|json|svg|png|pem))$/;
      const unexpected = paths().filter((p) => !allowed.test(p));
      assert.deepStrictEqual(unexpected, []);
      const forbidden = paths().filter((p) =>
        /(^|\/)(src|test|\.ci|bench|\.run|test-output|node_modules)\/|\.map$|\.ts$(?<!\.d\.ts)|(^|\/)flows(_[^/]*)?_cred\.json$|(^|\/)\.env|\.key$/.test(
          p,
        ),
      );
      assert.deepStrictEqual(forbidden, []);
    });

    it('ships no private key but the simulator throwaway one', function () {
      const keys = paths().filter((p) => /PRIVATE KEY-----/.test(fs.readFileSync(path.join(root, p), 'utf8')));
      assert.deepStrictEqual(keys, ['nodes/simulator/certs/server-key.pem']);
    });
  });
});
