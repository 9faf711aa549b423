import { grKey, type ResourceTable, type ResourceType } from './resources';
import { GC_FINALIZERS, type Registry } from './registry';
import type { ObjectStore, StoredObject } from './store';
import { finalizersOf } from './strategy';

interface Entry {
  rt: ResourceType;
  obj: StoredObject;
}

interface OwnerReference {
  uid?: unknown;
  blockOwnerDeletion?: unknown;
}

const FOREGROUND = GC_FINALIZERS.Foreground!;
const ORPHAN = GC_FINALIZERS.Orphan!;

/**
 * GarbageCollector plays kube-controller-manager's garbage collector over the embedded store, which
 * kube-apiserver alone (and envtest) does not run: after any change it deletes objects whose owners are
 * all gone, deletes the dependents of an owner deleted in the foreground and removes its
 * `foregroundDeletion` finalizer once no dependent with `blockOwnerDeletion` remains, and, for an owner
 * deleted with `orphan`, drops its ownerReferences from the dependents before removing the finalizer.
 * Owners are matched by uid, and a namespaced owner only within its dependent's namespace, as the real one.
 */
export class GarbageCollector {
  private pending: NodeJS.Immediate | undefined;
  private readonly unsubscribe: () => void;
  private stopped = false;

  constructor(
    private readonly table: ResourceTable,
    private readonly store: ObjectStore,
    private readonly registry: Registry,
  ) {
    this.unsubscribe = store.subscribe(() => this.schedule());
    this.schedule();
  }

  /** stop ends the collector: no sweep runs after it. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    if (this.pending) clearImmediate(this.pending);
    this.pending = undefined;
  }

  private schedule(): void {
    if (this.stopped || this.pending) return;
    // A sweep after the writer's request is answered, as the real collector works from its own watches.
    this.pending = setImmediate(() => {
      this.pending = undefined;
      this.sweep();
    });
  }

  /** sweep makes one pass of decisions; each write it does schedules the next pass. */
  sweep(): void {
    const entries: Entry[] = [];
    for (const rt of this.table.all()) for (const [, obj] of this.store.entries(grKey(rt))) entries.push({ rt, obj });
    const byUid = new Map<string, Entry>();
    for (const e of entries) byUid.set(String(e.obj.metadata.uid), e);
    const dependents = new Map<string, { entry: Entry; ref: OwnerReference }[]>();
    for (const entry of entries) {
      for (const ref of ownerRefs(entry.obj)) {
        const uid = String(ref.uid);
        dependents.set(uid, [...(dependents.get(uid) ?? []), { entry, ref }]);
      }
    }

    let wrote = false;
    for (const owner of entries) {
      const md = owner.obj.metadata;
      if (md.deletionTimestamp === undefined) continue;
      const finalizers = finalizersOf(owner.obj);
      const deps = dependents.get(String(md.uid)) ?? [];
      if (finalizers.includes(ORPHAN)) {
        for (const { entry } of deps) {
          const refs = ownerRefs(entry.obj).filter((r) => r.uid !== md.uid);
          this.registry.writeMetadata(entry.rt, entry.obj, {
            ...withoutKey(entry.obj.metadata, 'ownerReferences'),
            ...(refs.length > 0 ? { ownerReferences: refs } : {}),
          });
        }
        this.registry.writeMetadata(owner.rt, owner.obj, { ...md, finalizers: finalizers.filter((f) => f !== ORPHAN) });
        wrote = true;
      } else if (finalizers.includes(FOREGROUND)) {
        if (deps.some(({ ref }) => ref.blockOwnerDeletion === true)) continue;
        this.registry.writeMetadata(owner.rt, owner.obj, {
          ...md,
          finalizers: finalizers.filter((f) => f !== FOREGROUND),
        });
        wrote = true;
      }
    }
    // The dependents are judged on the next pass, against the owners just written.
    if (wrote) return;

    for (const dependent of entries) {
      const md = dependent.obj.metadata;
      if (md.deletionTimestamp !== undefined) continue;
      const refs = ownerRefs(dependent.obj);
      if (refs.length === 0) continue;
      const solid: OwnerReference[] = [];
      const dangling: OwnerReference[] = [];
      const waiting: OwnerReference[] = [];
      for (const ref of refs) {
        const owner = byUid.get(String(ref.uid));
        if (!owner || (owner.rt.namespaced && owner.obj.metadata.namespace !== md.namespace)) dangling.push(ref);
        else if (owner.obj.metadata.deletionTimestamp !== undefined && finalizersOf(owner.obj).includes(FOREGROUND))
          waiting.push(ref);
        else solid.push(ref);
      }
      if (solid.length > 0) {
        // Owners that remain keep the dependent; references to the others go.
        if (dangling.length + waiting.length === 0) continue;
        this.registry.writeMetadata(dependent.rt, dependent.obj, { ...md, ownerReferences: solid });
        continue;
      }
      const hasDependents = (dependents.get(String(md.uid)) ?? []).length > 0;
      const policy = waiting.length > 0 && hasDependents ? 'Foreground' : 'Background';
      try {
        this.registry.delete(
          {
            rt: dependent.rt,
            version: dependent.rt.versions[0]!,
            namespace: String(md.namespace ?? ''),
            name: String(md.name),
          },
          { uid: String(md.uid) },
          policy,
        );
      } catch {
        // Gone or replaced since the pass began: the next pass sees the new state.
      }
    }
  }
}

function ownerRefs(obj: StoredObject): OwnerReference[] {
  const refs = obj.metadata.ownerReferences;
  return Array.isArray(refs) ? (refs as OwnerReference[]) : [];
}

function withoutKey(md: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _drop, ...rest } = md;
  return rest;
}
