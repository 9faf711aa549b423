import { describe, expect, it } from 'vitest';
import type { StuckEntry } from '@/lib/changelog';
import { markWorkloadsSteps } from '@/lib/diagnose/owners';
import type { DiagnosisSource } from '@/lib/diagnose/source';

describe('markWorkloadsSteps', () => {
  const pod = (i: number) =>
    ({ id: `watch|Pod/shop/p${i}`, key: `Pod/shop/p${i}`, referent: 'Secret/shop/token' }) as unknown as StuckEntry;
  /** A manager whose one controller caches the given objects by key. */
  const caching = (objects: Record<string, object>) =>
    ({
      controllerNames: () => ['watch'],
      controller: () => ({ cached: (key: string) => objects[key] }),
    }) as unknown as DiagnosisSource;

  it('makes no index when no entry has a controller owner, and yields while it marks', () => {
    const entries = Array.from({ length: 100 }, (_, i) => pod(i));
    const objects = Object.fromEntries(entries.map((e) => [e.key, { metadata: { name: e.key } }]));
    let yields = 0;
    for (const steps = markWorkloadsSteps(caching(objects), entries, 10); !steps.next().done;) yields++;
    // Ten in the marking pass of a hundred entries, and no indexing pass.
    expect(yields).toBe(10);
    expect(entries.filter((e) => e.workload !== undefined)).toEqual([]);
  });

  it('indexes the entries in steps once an owner is found, and marks the workload that shares the cause', () => {
    const owner = {
      id: 'watch|ReplicaSet.apps/shop/web',
      key: 'ReplicaSet.apps/shop/web',
      referent: 'Secret/shop/token',
    } as unknown as StuckEntry;
    const entries = [...Array.from({ length: 99 }, (_, i) => pod(i)), owner];
    const ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', controller: true }];
    const objects: Record<string, object> = Object.fromEntries(
      entries.map((e) => [e.key, { metadata: e === owner ? {} : { ownerReferences } }]),
    );
    let yields = 0;
    for (const steps = markWorkloadsSteps(caching(objects), entries, 10); !steps.next().done;) yields++;
    // Ten in each pass of a hundred entries: a hundred thousand stuck Pods are indexed in steps too.
    expect(yields).toBe(20);
    expect(entries.slice(0, 99).every((e) => e.workload === owner.key)).toBe(true);
    expect(owner.workload).toBeUndefined();
  });
});
