/**
 * cache.appBytes: heap retained per cached App that arrived as a watch event, in-process, with no server: 20,000
 * MODIFIED lines of a 1.6 KB App (two managedFields entries, as kube-apiserver sends after a status write), each
 * parsed, stripped of managedFields (stripManagedFields, the pool's transform) and deep-frozen as a reflector
 * does, and kept. Heap used after GC, less heap used after GC before, divided by the number of objects; and the
 * time per event. Watch events are what the peer benchmark's controller caches (its lists are empty), where
 * kube-bytes measures a primed list.
 *
 * No target: it says what a change to the ingest path buys, beside bench peer and kube-bytes.
 *
 *   npm run bench -- cache-cost
 */
import { stripManagedFields } from '../lib/kube';
import { deepFreeze, type KubeObject } from '../lib/model';
import { gc, report } from './report';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);

function line(i: number): string {
  const at = '2026-11-26T13:00:00Z';
  const field = (name: string) => ({ '.': {}, [`f:${name}`]: { '.': {}, 'f:name': {} } });
  return JSON.stringify({
    type: 'MODIFIED',
    object: {
      apiVersion: 'demo.refwatch.dev/v1alpha1',
      kind: 'App',
      metadata: {
        name: `app-${i}`,
        namespace: 'peer-refwatch-abcdef',
        uid: `0b5c3c4e-1234-4567-89ab-${String(i).padStart(12, '0')}`,
        resourceVersion: String(100_000 + i),
        generation: 1,
        creationTimestamp: at,
        labels: { 'refwatch.dev/run': 'abcdef' },
        managedFields: [
          {
            manager: 'bench',
            operation: 'Update',
            apiVersion: 'demo.refwatch.dev/v1alpha1',
            time: at,
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { ...field('databaseRef'), ...field('cacheRef'), ...field('secretRef') } },
          },
          {
            manager: 'refwatch',
            operation: 'Update',
            apiVersion: 'demo.refwatch.dev/v1alpha1',
            time: at,
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:status': { '.': {}, 'f:resolvedAt': {} } },
            subresource: 'status',
          },
        ],
      },
      spec: { databaseRef: { name: `db-${i}` }, cacheRef: { name: `cache-${i}` }, secretRef: { name: `secret-${i}` } },
      status: { resolvedAt: at },
    },
  });
}

function ingest(text: string): KubeObject {
  const obj = (JSON.parse(text) as { object: KubeObject }).object;
  return deepFreeze(stripManagedFields(obj)) as KubeObject;
}

const lines = Array.from({ length: EVENTS }, (_, i) => line(i));
for (let i = 0; i < 2_000; i++) ingest(lines[i]!); // warm up: compiled code and shapes are not the cache's
const kept: KubeObject[] = [];
gc();
const before = process.memoryUsage().heapUsed;
const t0 = performance.now();
for (const l of lines) kept.push(ingest(l));
const ms = performance.now() - t0;
gc();
const after = process.memoryUsage().heapUsed;
console.log(`${kept.length} App watch events of ${lines[0]!.length} bytes: parsed, stripped, frozen and kept`);
report('cache.appBytes', Math.round((after - before) / kept.length), 'B/object');
report('cache.appIngest', +((ms * 1000) / kept.length).toFixed(2), 'µs/event');
