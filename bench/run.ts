import { main } from './runner';

// npm run bench -- NAME runs bench/NAME.ts, or bench/NAME/bench.ts for a benchmark
// with a folder of its own; with no name, every benchmark in turn. It exits 1
// when any benchmark fails: a MISS, a crash, or a skip under REFWATCH_BENCH_REAL=1.
process.exit(await main(process.argv.slice(2), process.env, import.meta.dirname));
