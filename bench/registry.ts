import { ReferenceRegistry } from '../lib/registry';
import type { Reference } from '../lib/model';
import { gc, result } from './report';

// registry.setReferences: 100k referrers × 3 refs each; each call changes one ref.
// Target: >= 500,000 calls/s, 2 µs a call. Every reconcile ends in one call, and a reconcile costs at
// least its status write (a loopback request, a fraction of a millisecond and up), so the registry
// stays under 1% of it; a resync of 100,000 referrers spends 0.2 s in it.
function setReferencesThroughput(): void {
  const referrers = 100_000;
  const r = new ReferenceRegistry();
  const keys = Array.from({ length: referrers }, (_, i) => `App.demo.refwatch.dev/ns-${i % 100}/app-${i}`);
  const db = (i: number) => `Database.demo.refwatch.dev/ns-${i % 100}/db-${i % 5000}`;
  const cache = (i: number) => `Cache.demo.refwatch.dev/ns-${i % 100}/cache-${i % 5000}`;
  const secret = (i: number) => `Secret/ns-${i % 100}/secret-${i % 5000}`;
  const sets: Reference[][] = keys.map((_, i) => [
    { referent: db(i), fieldPath: 'spec.databaseRef' },
    { referent: cache(i), fieldPath: 'spec.cacheRef' },
    { referent: secret(i), fieldPath: 'spec.secretRef' },
  ]);
  for (let i = 0; i < referrers; i++) r.setReferences('watch', keys[i]!, sets[i]!);
  // Pre-build the changed sets so the loop measures the registry, not string building.
  const variants: Reference[][] = sets.map((s, i) => [
    s[0]!,
    s[1]!,
    { referent: secret(i + 1), fieldPath: 'spec.secretRef' },
  ]);
  const calls = 1_000_000;
  const t0 = process.hrtime.bigint();
  for (let c = 0; c < calls; c++) {
    const i = c % referrers;
    r.setReferences('watch', keys[i]!, (c / referrers) % 2 < 1 ? variants[i]! : sets[i]!);
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  result('registry.setReferences', Math.round(calls / secs), 'calls/s', '>=', 500_000);
}

// registry.bytesPerEdge: heap delta after GC with 1M (referrer, referent) edges:
// 250k referrers × 4 references over 100k referents.
// Target: <= 200 bytes an edge: a million references (the wire bench's registry) in 200 MB, a quarter
// of the 768Mi the Helm chart gives the server, which leaves the rest to the watched kinds' caches.
function bytesPerEdge(): void {
  const referrers = 250_000;
  const paths = ['spec.databaseRef', 'spec.replicaRef', 'spec.backupRef', 'spec.auditRef'];
  gc();
  // The key strings count too: the registry is what keeps them alive.
  const before = process.memoryUsage().heapUsed;
  const referents = Array.from({ length: 100_000 }, (_, i) => `Database.demo.refwatch.dev/ns-${i % 100}/db-${i}`);
  const keys = Array.from({ length: referrers }, (_, i) => `App.demo.refwatch.dev/ns-${i % 100}/app-${i}`);
  const r = new ReferenceRegistry();
  for (let i = 0; i < referrers; i++) {
    const refs: Reference[] = paths.map((fieldPath, j) => ({
      referent: referents[(i * 4 + j) % referents.length]!,
      fieldPath,
    }));
    r.setReferences('watch', keys[i]!, refs);
  }
  referents.length = 0;
  keys.length = 0;
  gc();
  const after = process.memoryUsage().heapUsed;
  if (r.edgeCount !== 1_000_000) throw new Error(`expected 1M edges, have ${r.edgeCount}`);
  result('registry.bytesPerEdge', Math.round((after - before) / r.edgeCount), 'bytes', '<=', 200);
}

setReferencesThroughput();
bytesPerEdge();
