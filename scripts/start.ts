// npm start [-- --context prod --port 3001 …]: serves the dashboard, building first if needed.
// Flags become the REFWATCH_* variables that server/config.ts parses; a bad value stops here, clearly.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { flagsToEnv } from '../server/config';
import { startConfig } from '../server/startup';

const root = path.resolve(import.meta.dirname, '..');
const next = path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next');

let env: NodeJS.ProcessEnv;
try {
  env = { ...process.env, ...flagsToEnv(process.argv.slice(2)), NEXT_TELEMETRY_DISABLED: "1" } as NodeJS.ProcessEnv;
} catch (e) {
  console.error(`refwatch: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
// An invalid or unsafe configuration (e.g. bound beyond loopback without a token) exits 2 here, before any build.
const { host, port } = startConfig(env);

/** newest is the latest modification time under dir, skipping dependencies and build output. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const buildId = path.join(root, '.next', 'BUILD_ID');
const sources = ['app', 'components', 'lib', 'server', 'deploy', 'instrumentation.ts', 'next.config.js', 'package.json'].map((d) => path.join(root, d)).filter(existsSync);
const newestSource = Math.max(...sources.map((p) => (statSync(p).isDirectory() ? newest(p) : statSync(p).mtimeMs)));
if (!existsSync(buildId) || newestSource > statSync(buildId).mtimeMs) {
  console.log('refwatch: building the dashboard (first start, or sources changed)…');
  const b = spawnSync(process.execPath, [next, 'build'], { cwd: root, stdio: 'inherit', env });
  if (b.status !== 0) {
    console.error('refwatch: the build failed; see above');
    process.exit(1);
  }
}
console.log(`refwatch: serving on http://${host}:${port}`);
const child = spawn(process.execPath, [next, 'start', '--hostname', host, '--port', String(port)], { cwd: root, stdio: 'inherit', env });
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
