// node --import tsx scripts/heap-summary.ts FILE.heapsnapshot [--top N]
// Summarizes a V8 heap snapshot (node --heapsnapshot-signal, or bench/lib-rss.ts with
// REFWATCH_BENCH_HEAPSNAPSHOT=1): the heap by node type, the largest constructors by self size, and the
// code each package brought (its modules' source text, function metadata and bytecode), by package.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const file = process.argv[2];
const topIdx = process.argv.indexOf('--top');
const top = topIdx > 0 ? Number(process.argv[topIdx + 1]) : 12;
if (!file || !Number.isInteger(top) || top < 1) {
  console.error('usage: heap-summary.ts FILE.heapsnapshot [--top N]');
  process.exit(2);
}

const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const { meta } = s.snapshot;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const [TYPE, NAME, SIZE, EDGES] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
  meta.node_fields.indexOf(f),
) as [number, number, number, number];
const [ETYPE, ENAME, ETO] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [
  number,
  number,
  number,
];
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const { nodes, edges, strings } = s;
const count = nodes.length / NF;

const firstEdge = new Uint32Array(count + 1);
for (let n = 0, e = 0; n < count; n++) {
  firstEdge[n] = e;
  e += nodes[n * NF + EDGES]! * EF;
  firstEdge[n + 1] = e;
}
const type = (n: number) => nodeTypes[nodes[n * NF + TYPE]!]!;
const name = (n: number) => strings[nodes[n * NF + NAME]!]!;
const size = (n: number) => nodes[n * NF + SIZE]!;
/** out lists a node's edges as [edge name, target node]. */
function out(n: number): [string, number][] {
  const r: [string, number][] = [];
  for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += EF) {
    const et = edgeTypes[edges[e + ETYPE]!];
    const en = et === 'element' || et === 'hidden' ? String(edges[e + ENAME]) : strings[edges[e + ENAME]!]!;
    r.push([en, edges[e + ETO]! / NF]);
  }
  return r;
}

const mb = (b: number) => (b / 1048576).toFixed(1).padStart(6);
function table(title: string, rows: [string, number, number?][]): void {
  console.log(`\n${title}`);
  for (const [k, bytes, n] of rows)
    console.log(`  ${mb(bytes)} MB  ${n === undefined ? '' : `${String(n).padStart(7)}  `}${k}`);
}
const sorted = (m: Map<string, { bytes: number; n: number }>) =>
  [...m].sort((a, b) => b[1].bytes - a[1].bytes).map(([k, v]): [string, number, number] => [k, v.bytes, v.n]);
const add = (m: Map<string, { bytes: number; n: number }>, k: string, bytes: number) => {
  const v = m.get(k) ?? { bytes: 0, n: 0 };
  v.bytes += bytes;
  v.n++;
  m.set(k, v);
};

let total = 0;
const byType = new Map<string, { bytes: number; n: number }>();
const byConstructor = new Map<string, { bytes: number; n: number }>();
for (let n = 0; n < count; n++) {
  total += size(n);
  add(byType, type(n), size(n));
  if (type(n) === 'object') add(byConstructor, name(n), size(n));
}

/** packageOf names the package of a module URL: node_modules/<pkg>, or node's own. */
function packageOf(url: string): string {
  if (url.startsWith('node:')) return 'node (built-in modules)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  return url.startsWith('file:') || url.startsWith('/') ? '(application)' : '(other)';
}

// A Script is a code node with a `source` edge; a SharedFunctionInfo points at its Script through
// `script_or_debug_info`. Each node is counted once, for the first package that claims it.
const claimed = new Uint8Array(count);
const byPackage = new Map<string, { bytes: number; n: number }>();
function claim(pkg: string, n: number): void {
  if (claimed[n]) return;
  claimed[n] = 1;
  add(byPackage, pkg, size(n));
}
const scriptPackage = new Map<number, string>();
for (let n = 0; n < count; n++) {
  if (type(n) !== 'code') continue;
  const source = out(n).find(([e]) => e === 'source');
  if (!source) continue;
  const pkg = packageOf(name(n));
  scriptPackage.set(n, pkg);
  claim(pkg, n);
  claim(pkg, source[1]);
}
const OWNED = new Set(['name_or_scope_info', 'function_data', 'raw_outer_scope_info_or_feedback_metadata']);
for (let n = 0; n < count; n++) {
  if (type(n) !== 'code') continue;
  const edgesOut = out(n);
  const script = edgesOut.find(([e]) => e === 'script_or_debug_info');
  const pkg = script && scriptPackage.get(script[1]);
  if (!pkg) continue;
  claim(pkg, n);
  for (const [e, to] of edgesOut) {
    if (!OWNED.has(e)) continue;
    claim(pkg, to);
    // A BytecodeArray's constant pool and position tables belong to it.
    if (e === 'function_data')
      for (const [, inner] of out(to)) if (type(inner) === 'array' || type(inner) === 'code') claim(pkg, inner);
  }
}

console.log(`${file}: ${mb(total).trim()} MB of heap in ${count} nodes`);
table('by node type', sorted(byType).slice(0, top));
table(`largest constructors (self size, count)`, sorted(byConstructor).slice(0, top));
table(
  'code by package (module source, function metadata, bytecode; count = heap nodes)',
  sorted(byPackage).slice(0, top),
);
