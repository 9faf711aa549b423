import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const lib = path.join(root, 'lib');
const ENTRY_POINTS = [
  'engine',
  'kube',
  'log',
  'registry',
  'queue',
  'model',
  'changelog',
  'diagnose',
  'rules',
  'testing',
  'admission',
];
/** lib/demo holds the demo API's wire shapes for the server and the dashboard: it is not the library's. */
const DASHBOARD_ONLY = 'demo';

interface Manifest {
  name: string;
  private?: boolean;
  workspaces?: string[];
  exports: Record<string, string | { types: string; default: string }>;
  files: string[];
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(path.join(lib, 'package.json'), 'utf8')) as Manifest;

/** sources lists lib's TypeScript files as paths relative to lib, without build output and dependencies. */
function sources(dir = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(lib, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) {
      if (!['dist', 'node_modules', DASHBOARD_ONLY].includes(rel)) out.push(...sources(rel));
    } else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

function importsOf(file: string): string[] {
  const text = readFileSync(path.join(lib, file), 'utf8');
  return [
    ...text.matchAll(
      /(?:^|\s)(?:import|export)\s[^'";]*?from\s+['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm,
    ),
  ].map((m) => m[1] ?? m[2] ?? m[3]!);
}

describe('the refwatch package (lib/)', () => {
  it('imports only its own files, Node built-ins and its declared dependencies: no Next, React or dashboard', () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(40);
    const stray: string[] = [];
    const used = new Set<string>();
    for (const file of files) {
      for (const spec of importsOf(file)) {
        if (spec.startsWith('node:')) continue;
        if (spec.startsWith('.')) {
          const target = path.relative(lib, path.resolve(lib, path.dirname(file), spec));
          if (
            target.startsWith('..') ||
            target.split(path.sep)[0] === DASHBOARD_ONLY ||
            target.split(path.sep)[0] === 'dist'
          )
            stray.push(`${file}: ${spec} leaves the library`);
          continue;
        }
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        used.add(pkg);
        if (!(pkg in manifest.dependencies)) stray.push(`${file}: ${spec} is not a dependency in lib/package.json`);
      }
    }
    expect(stray).toEqual([]);
    // Every dependency is used, so installing refwatch brings nothing the library does not need.
    expect(Object.keys(manifest.dependencies).sort()).toEqual([...used].sort());
    const deps = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
    expect(deps.filter((d) => /^(next|react|react-dom|server-only|@next\/)/.test(d))).toEqual([]);
  });

  it('exports each entry point with its declarations, from the build of its index.ts', () => {
    expect(Object.keys(manifest.exports).sort()).toEqual(
      [...ENTRY_POINTS.map((e) => `./${e}`), './package.json'].sort(),
    );
    for (const entry of ENTRY_POINTS) {
      expect(manifest.exports[`./${entry}`]).toEqual({
        types: `./dist/${entry}/index.d.ts`,
        default: `./dist/${entry}/index.js`,
      });
      expect(existsSync(path.join(lib, entry, 'index.ts')), `lib/${entry}/index.ts`).toBe(true);
    }
  });

  it('packs its build, its sources (for the source maps) and README, and nothing of the dashboard or the tests', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: lib,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(files).toContain('package.json');
    expect(files).toContain('README.md');
    const unexpected = files.filter((f) => {
      if (f === 'package.json' || f === 'README.md') return false;
      if (f.startsWith(`dist/${DASHBOARD_ONLY}/`) || f.endsWith('.tsbuildinfo')) return true;
      if (f.startsWith('dist/')) return false;
      return !(f.endsWith('.ts') && !f.endsWith('.test.ts') && f.split('/')[0] !== DASHBOARD_ONLY);
    });
    expect(unexpected).toEqual([]);
    for (const entry of ENTRY_POINTS) expect(files).toContain(`${entry}/index.ts`);
  });

  it('builds without lib/demo, and is a workspace of the private dashboard package', () => {
    const build = JSON.parse(readFileSync(path.join(lib, 'tsconfig.build.json'), 'utf8')) as { exclude: string[] };
    expect(build.exclude).toContain(DASHBOARD_ONLY);
    const rootManifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;
    expect(rootManifest.private).toBe(true);
    expect(rootManifest.workspaces).toEqual(['lib']);
    expect(manifest.name).toBe('refwatch');
    expect(manifest.private).toBeUndefined();
  });
});
