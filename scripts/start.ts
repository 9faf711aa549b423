// npm start [-- --context prod --port 3001 …]: serves the dashboard, building first if needed.
// Flags become the REFWATCH_* variables that server/config.ts parses; a bad value stops here, clearly.
// It runs the standalone server (scripts/build-standalone.ts), the same one the container image runs.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { flagsToEnv } from '../server/config';
import { startConfig } from '../server/startup';
import { ensureStandalone } from './build-standalone';

let env: NodeJS.ProcessEnv;
try {
  env = { ...process.env, ...flagsToEnv(process.argv.slice(2)), NEXT_TELEMETRY_DISABLED: '1' } as NodeJS.ProcessEnv;
} catch (e) {
  console.error(`refwatch: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
// An invalid or unsafe configuration (e.g. bound beyond loopback without a token) exits 2 here, before any build.
const { host, port } = startConfig(env);

let dir: string;
try {
  dir = ensureStandalone(undefined, env);
} catch (e) {
  console.error(`refwatch: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
console.log(`refwatch: serving on http://${host}:${port}`);
// The standalone server reads its address from HOSTNAME and PORT.
const child = spawn(process.execPath, [path.join(dir, 'server.js')], {
  stdio: 'inherit',
  env: { ...env, HOSTNAME: host, PORT: String(port) },
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
