import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

// npm run bench -- NAME runs bench/NAME.ts, or bench/NAME/bench.ts for a benchmark
// with a folder of its own; with no name, every benchmark in turn.
const dir = import.meta.dirname;
const skip = new Set(['run.ts', 'report.ts']);
const all = readdirSync(dir, { withFileTypes: true })
  .flatMap((e) =>
    e.isFile() && e.name.endsWith('.ts') && !skip.has(e.name)
      ? [e.name.slice(0, -3)]
      : e.isDirectory() && existsSync(path.join(dir, e.name, 'bench.ts'))
        ? [e.name]
        : [],
  )
  .sort();
const entry = (name: string) =>
  existsSync(path.join(dir, `${name}.ts`)) ? path.join(dir, `${name}.ts`) : path.join(dir, name, 'bench.ts');
// These need a real kube-apiserver (tens of minutes): run when named, or in the full run with REFWATCH_BENCH_REAL=1.
const realOnly = new Set(['peer', 'faults']);
const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const n of names) {
  if (!all.includes(n)) {
    console.error(`no benchmark named "${n}"; choose one of: ${all.join(', ')}`);
    process.exit(2);
  }
}
let failed = 0;
for (const name of names.length ? names : all) {
  if (!names.length && realOnly.has(name) && process.env.REFWATCH_BENCH_REAL !== '1') {
    console.log(
      `== bench ${name} not run: it needs a real kube-apiserver; run npm run bench -- ${name}, or set REFWATCH_BENCH_REAL=1`,
    );
    continue;
  }
  console.log(`== bench ${name}`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--conditions=react-server', '--import', 'tsx', entry(name)], {
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    failed++;
    console.error(`bench ${name} exited with ${r.status ?? r.signal}`);
  }
}
process.exit(failed ? 1 : 0);
