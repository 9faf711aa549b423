#!/usr/bin/env node
// npm start [-- --context prod --port 3001 …]: serves the dashboard, building first if needed.
// Flags become the REFWATCH_* variables that server/config.ts parses (see README).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const FLAGS = {
  '--cluster': 'REFWATCH_CLUSTER',
  '--kubeconfig': 'KUBECONFIG',
  '--context': 'REFWATCH_CONTEXT',
  '--host': 'REFWATCH_HOST',
  '--port': 'REFWATCH_PORT',
  '--token': 'REFWATCH_TOKEN',
  '--grace': 'REFWATCH_GRACE',
  '--stuck-threshold': 'REFWATCH_STUCK_THRESHOLD',
  '--rules': 'REFWATCH_RULES',
  '--packs': 'REFWATCH_RULE_PACKS',
  '--demo': 'REFWATCH_DEMO',
};

function fail(message) {
  console.error(`refwatch: ${message}`);
  process.exit(2);
}

const env = { ...process.env };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  const eq = arg.indexOf('=');
  const flag = eq < 0 ? arg : arg.slice(0, eq);
  const name = FLAGS[flag];
  if (!name) fail(`unknown argument ${arg}; flags are ${Object.keys(FLAGS).join(', ')}`);
  const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
  if (value === undefined) fail(`flag ${flag} needs a value`);
  env[name] = value;
  if ((flag === '--kubeconfig' || flag === '--context') && !env.REFWATCH_CLUSTER) env.REFWATCH_CLUSTER = 'kubeconfig';
}
const host = env.REFWATCH_HOST || '127.0.0.1';
const port = env.REFWATCH_PORT || '3000';
if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) fail(`REFWATCH_PORT (flag --port) "${port}" is not a port number 1-65535`);

// Build when there is no build, or when any source is newer than it.
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const buildId = path.join(root, '.next', 'BUILD_ID');
const sources = ['app', 'components', 'lib', 'server', 'deploy'].map((d) => path.join(root, d)).filter(existsSync);
const stale = !existsSync(buildId) || Math.max(...sources.map(newest), statSync(path.join(root, 'package.json')).mtimeMs) > statSync(buildId).mtimeMs;
if (stale) {
  console.log('refwatch: building the dashboard (first start, or sources changed)…');
  const b = spawnSync(process.execPath, [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], { cwd: root, stdio: 'inherit', env: { ...env, NEXT_TELEMETRY_DISABLED: '1' } });
  if (b.status !== 0) fail('the build failed; see above');
}
console.log(`refwatch: serving on http://${host}:${port}`);
const child = spawn(process.execPath, [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'start', '--hostname', host, '--port', port], {
  cwd: root,
  stdio: 'inherit',
  env: { ...env, NEXT_TELEMETRY_DISABLED: '1', REFWATCH_HOST: host, REFWATCH_PORT: port },
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
