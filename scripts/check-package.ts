// node --import tsx scripts/check-package.ts DIR
// Checks an installed (or unpacked) refwatch package the way a consumer meets it: every `exports` entry has its
// JavaScript and declarations, every relative import inside dist/ resolves to a shipped file, every source map's
// sources are shipped, each entry point loads in plain node, and nothing of the dashboard came along.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const FORBIDDEN_DEPENDENCIES = /^(next|react|react-dom|@next\/|@tanstack\/|server-only$|cytoscape|chart\.js)/;

interface Manifest {
  name: string;
  exports: Record<string, string | { types?: string; default?: string }>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const dir = path.resolve(process.argv[2] ?? '');
const problems: string[] = [];
const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;

for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
  if (FORBIDDEN_DEPENDENCIES.test(dep)) problems.push(`package.json depends on ${dep}, a dashboard dependency`);
}

const files = listFiles(dir).filter((f) => !f.startsWith('node_modules/'));
for (const f of files) {
  if (f.startsWith('demo/') || f.startsWith('dist/demo/'))
    problems.push(`${f}: lib/demo is the dashboard's, not the library's`);
  if (f.endsWith('.tsbuildinfo') || /\.test\.tsx?$/.test(f)) problems.push(`${f}: build or test file in the package`);
}

const entries: [string, string][] = [];
for (const [subpath, target] of Object.entries(manifest.exports)) {
  if (typeof target === 'string') {
    if (!existsSync(path.join(dir, target))) problems.push(`exports["${subpath}"] → ${target}: missing`);
    continue;
  }
  for (const [condition, file] of Object.entries(target)) {
    if (!file || !existsSync(path.join(dir, file)))
      problems.push(`exports["${subpath}"].${condition} → ${file}: missing`);
  }
  if (!target.types) problems.push(`exports["${subpath}"] has no types`);
  if (target.default) entries.push([subpath, target.default]);
}

const specifier = /(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]*)['"]/g;
for (const f of files.filter((x) => x.startsWith('dist/'))) {
  const text = readFileSync(path.join(dir, f), 'utf8');
  if (f.endsWith('.js') || f.endsWith('.d.ts')) {
    for (const m of text.matchAll(specifier)) {
      const target = path.join(path.dirname(f), m[1]!);
      if (!m[1]!.endsWith('.js') || !existsSync(path.join(dir, target)))
        problems.push(`${f}: import '${m[1]}' does not name a shipped file`);
    }
  }
  if (f.endsWith('.js') && !files.includes(`${f}.map`)) problems.push(`${f}: no source map`);
  if (f.endsWith('.map')) {
    const map = JSON.parse(text) as { sources: string[] };
    for (const s of map.sources) {
      if (!existsSync(path.join(dir, path.dirname(f), s))) problems.push(`${f}: source ${s} is not shipped`);
    }
  }
}

for (const [subpath, file] of entries) {
  try {
    await import(pathToFileURL(path.join(dir, file)).href);
  } catch (e) {
    problems.push(`${manifest.name}${subpath.slice(1)} does not load: ${e instanceof Error ? e.message : String(e)}`);
  }
}

if (problems.length > 0) {
  console.error(`${manifest.name} at ${dir}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(
  `${manifest.name} at ${dir}: ${entries.length} entry points, ${files.length} files, every import and source map resolves`,
);

function listFiles(root: string, sub = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(root, sub), { withFileTypes: true })) {
    const rel = sub ? `${sub}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listFiles(root, rel));
    else out.push(rel);
  }
  return out;
}
