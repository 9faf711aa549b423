import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

// npm run bench -- NAME runs bench/NAME.ts; with no name, every benchmark in turn.
const dir = import.meta.dirname;
const skip = new Set(['run.ts', 'report.ts']);
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !skip.has(f))
  .map((f) => f.slice(0, -3))
  .sort();
const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const n of names) {
  if (!existsSync(path.join(dir, `${n}.ts`))) {
    console.error(`no benchmark named "${n}"; choose one of: ${all.join(', ')}`);
    process.exit(2);
  }
}
let failed = 0;
for (const name of names.length ? names : all) {
  console.log(`== bench ${name}`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--conditions=react-server', '--import', 'tsx', path.join(dir, `${name}.ts`)], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.error(`bench ${name} exited with ${r.status ?? r.signal}`);
  }
}
process.exit(failed ? 1 : 0);
