// The standalone server: `next build` with output 'standalone', plus the assets that build leaves out.
// The Dockerfile, scripts/start.ts and the tests all build it through here, so they run the same steps.
//
//   npx tsx scripts/build-standalone.ts      # builds; prints the folder to run `node server.js` in
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCES = [
  'app',
  'components',
  'lib',
  'server',
  'deploy/demo',
  'deploy/example',
  'deploy/kubernetes/base/referencerules-crd.yaml',
  'instrumentation.ts',
  'next.config.js',
  'package.json',
  'package-lock.json',
];

/** standaloneDir is where `next build` writes the self-contained server (server.js, its node_modules, .next). */
export function standaloneDir(root = ROOT): string {
  return path.join(root, '.next', 'standalone');
}

/** newest is the latest modification time under p, skipping dependencies and build output (lib/dist is the library's own build). */
function newest(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let t = 0;
  for (const e of readdirSync(p, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) continue;
    t = Math.max(t, newest(path.join(p, e.name)));
  }
  return t;
}

/** isStandaloneCurrent: the standalone server exists and is newer than every source it is built from. */
export function isStandaloneCurrent(root = ROOT): boolean {
  const marker = path.join(standaloneDir(root), '.next', 'BUILD_ID');
  if (!existsSync(marker) || !existsSync(path.join(standaloneDir(root), 'server.js'))) return false;
  const sources = SOURCES.map((s) => path.join(root, s)).filter(existsSync);
  return Math.max(...sources.map(newest)) <= statSync(marker).mtimeMs;
}

/**
 * buildStandalone runs `next build`, then copies .next/static (and public/, if
 * any) into the standalone folder, as Next's docs require: the standalone
 * server serves them but the build does not copy them. Throws if the build fails.
 */
export function buildStandalone(root = ROOT, env: NodeJS.ProcessEnv = process.env): string {
  const next = path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next');
  const b = spawnSync(process.execPath, [next, 'build'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
    env: { ...env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
  });
  if (b.status !== 0) throw new Error(`next build failed (${b.status ?? b.signal}); see its output above`);
  const out = standaloneDir(root);
  if (!existsSync(path.join(out, 'server.js')))
    throw new Error(
      `next build wrote no ${path.join(out, 'server.js')}: is output 'standalone' set in next.config.js?`,
    );
  const staticDir = path.join(out, '.next', 'static');
  rmSync(staticDir, { recursive: true, force: true });
  cpSync(path.join(root, '.next', 'static'), staticDir, { recursive: true });
  if (existsSync(path.join(root, 'public')))
    cpSync(path.join(root, 'public'), path.join(out, 'public'), { recursive: true });
  return out;
}

/** ensureStandalone builds only when the standalone server is missing or older than its sources. */
export function ensureStandalone(
  root = ROOT,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = console.log,
): string {
  if (isStandaloneCurrent(root)) return standaloneDir(root);
  log('refwatch: building the standalone server (first start, or sources changed)…');
  return buildStandalone(root, env);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  try {
    // stdout carries only the folder, for scripts; the build's own output goes to stderr.
    console.log(buildStandalone(ROOT, process.env));
  } catch (e) {
    console.error(`refwatch: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
