import {
  kindKey,
  keyOf,
  namespaceOfKey,
  RefwatchError,
  type CachedObject,
  type GroupKind,
  type ObjectKey,
} from '../model';
import { editDistance } from '../diagnose/edit-distance';
import { maxDistanceFor } from '../diagnose/similar-names';
import { plural } from '../diagnose/selector-hints';
import { watchTargetKey, type InformerSource, type InformerSubscription, type WatchTarget } from './informer-source';
import type { Selection } from './selection';

/**
 * LookupSpec is a reference that names its referent by a value held in the
 * referent rather than by its name: among the objects a label selector picks,
 * the one whose field (decoded when asked) equals the value. An Argo CD
 * Application names its cluster Secret by the cluster's name, which is the
 * Secret's base64 `data.name`.
 */
export interface LookupSpec {
  kind: GroupKind;
  /** Where the candidates live: default the referrer's own namespace. */
  namespace?: string;
  /** Picks the candidates, in kubectl form (`argocd.argoproj.io/secret-type=cluster`); only these are watched. */
  labelSelector: string;
  /** The candidate's field compared, a dotted path (`data.name`); the only field of theirs kept in memory. */
  field: string;
  /** How the field is written: base64 (a Secret's data) or as is. */
  decode?: 'base64';
  /** The value the referrer names. */
  equals: string;
  /** The referrer's field holding the value, shown in diagnosis and on edges (`spec.destination.name`). */
  fieldPath: string;
  /** What a candidate is, for messages: `Argo CD cluster`; default the kind. */
  noun?: string;
  /** How the value names it, for messages: `named`, `with server`; default `with <field>`. */
  by?: string;
}

/**
 * lookupTarget is the shared watch a lookup reads: the kind in the namespace,
 * narrowed by the label selector and projected to metadata and the one field.
 */
export function lookupTarget(spec: LookupSpec, namespace: string): WatchTarget {
  return {
    group: spec.kind.group,
    kind: spec.kind.kind,
    namespace,
    labelSelector: spec.labelSelector,
    fields: [spec.field],
  };
}

/** valueOf reads a lookup's field from a candidate, decoded; undefined when absent or not a string. */
export function valueOf(obj: CachedObject, field: string, decode: LookupSpec['decode']): string | undefined {
  let v: unknown = obj;
  for (const p of field.split('.'))
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  if (typeof v !== 'string') return undefined;
  return decode === 'base64' ? Buffer.from(v, 'base64').toString('utf8') : v;
}

interface SharedLookup {
  sub: InformerSubscription;
  /** Referrers whose last reconcile looked here: each change of a candidate queues them. */
  referrers: Set<ObjectKey>;
}

/**
 * LookupReferences holds one controller's lookup watches: one shared watch
 * per target, acquired by the first referrer that looks there and released
 * when the last one stops looking (or on stop). Any change of a candidate
 * queues the referrers that look there, since a renamed or relabelled
 * candidate may start or stop matching.
 */
export class LookupReferences {
  private readonly shared = new Map<string, SharedLookup>();
  private readonly byReferrer = new Map<ObjectKey, Set<string>>();

  constructor(
    private readonly source: InformerSource,
    private readonly wake: (key: ObjectKey) => void,
  ) {}

  /** ensure makes the referrer a watcher of the target, acquiring its watch if needed, and returns its store. */
  ensure(referrer: ObjectKey, target: WatchTarget): { id: string; sub: InformerSubscription } {
    const id = watchTargetKey(target);
    let s = this.shared.get(id);
    if (!s) {
      const referrers = new Set<ObjectKey>();
      const sub = this.source.acquire(target, (event) => {
        if (event.type === 'error' || event.type === 'recovered') return;
        for (const r of referrers) this.wake(r);
      });
      this.shared.set(id, (s = { sub, referrers }));
    }
    s.referrers.add(referrer);
    let mine = this.byReferrer.get(referrer);
    if (!mine) this.byReferrer.set(referrer, (mine = new Set()));
    mine.add(id);
    return { id, sub: s.sub };
  }

  /** keepOnly stops the referrer looking where it did not look this reconcile; a watch nobody uses is released. */
  keepOnly(referrer: ObjectKey, keep: ReadonlySet<string>): void {
    const mine = this.byReferrer.get(referrer);
    if (!mine) return;
    for (const id of mine) {
      if (keep.has(id)) continue;
      mine.delete(id);
      const s = this.shared.get(id);
      if (!s) continue;
      s.referrers.delete(referrer);
      if (s.referrers.size === 0) {
        this.shared.delete(id);
        void s.sub.release();
      }
    }
    if (mine.size === 0) this.byReferrer.delete(referrer);
  }

  has(referrer: ObjectKey): boolean {
    return this.byReferrer.has(referrer);
  }

  /** watches is how many lookup watches are held now. */
  get watches(): number {
    return this.shared.size;
  }

  /** stop releases every lookup watch; awaited. */
  async stop(): Promise<void> {
    const subs = [...this.shared.values()].map((s) => s.sub);
    this.shared.clear();
    this.byReferrer.clear();
    await Promise.all(subs.map((s) => s.release()));
  }
}

/** LookupContext is what lookup() needs from the reconcile that calls it. */
export interface LookupContext {
  referrer: ObjectKey;
  lookups: LookupReferences;
  keep: Set<string>;
  /** Registers the matched object as a reference of the referrer. */
  reference(key: ObjectKey, fieldPath: string): void;
}

/**
 * lookup declares a lookup reference (subscribe before read) and answers it
 * from the lookup's own cache: Ready with the matched object as a reference,
 * NoMatch with the near values the candidates hold, or NotPrimed.
 */
export function lookup(ctx: LookupContext, spec: LookupSpec): Selection {
  if (spec.labelSelector.trim() === '')
    throw new RefwatchError(
      'InvalidLookup',
      `lookup at ${spec.fieldPath}: labelSelector is empty; give the label that marks the candidates`,
      {
        field: 'labelSelector',
      },
    );
  const namespace = spec.namespace ?? namespaceOfKey(ctx.referrer);
  const kind = kindKey(spec.kind);
  const { id, sub } = ctx.lookups.ensure(ctx.referrer, lookupTarget(spec, namespace));
  ctx.keep.add(id);
  const base = {
    fieldPath: spec.fieldPath,
    kind,
    selector: `${spec.labelSelector}, ${spec.field}=${spec.equals}`,
    where: namespace === '' ? 'the cluster' : namespace,
    objects: [],
    ready: 0,
  };
  if (!sub.isPrimed()) {
    const error = sub.status().lastError;
    return {
      ...base,
      keys: [],
      state: 'NotPrimed',
      blocking: true,
      reason: error?.reason ?? 'NotPrimed',
      message:
        error?.message ?? `the cache of ${plural(spec.kind.kind)} labelled ${spec.labelSelector} is still loading`,
      error,
    };
  }
  const keys: ObjectKey[] = [];
  const values: string[] = [];
  for (const obj of sub.store.values()) {
    const v = valueOf(obj, spec.field, spec.decode);
    if (v === undefined) continue;
    if (v === spec.equals) keys.push(keyOf(obj));
    else values.push(v);
  }
  keys.sort();
  for (const key of keys) ctx.reference(key, spec.fieldPath);
  if (keys.length > 0) return { ...base, keys, ready: keys.length, state: 'Ready', blocking: false };
  const noun = spec.noun ?? spec.kind.kind;
  const by = spec.by ?? `with ${spec.field}`;
  const near = nearest(spec.equals, values);
  const where = namespace === '' ? '' : ` in ${namespace}`;
  const holds = `${spec.field}${spec.decode === 'base64' ? ' decodes to' : ' is'} "${spec.equals}"`;
  const create = `create a ${spec.kind.kind}${where} labelled ${spec.labelSelector} whose ${holds}`;
  return {
    ...base,
    keys,
    state: 'NoMatch',
    blocking: true,
    reason: 'NoMatch',
    message: `no ${noun} ${by} "${spec.equals}" is registered (${plural(spec.kind.kind)} labelled ${spec.labelSelector}${where})${near ? `; did you mean "${near}"?` : ''}`,
    fix: near ? `set ${spec.fieldPath} to "${near}", or ${create}` : `${create}, or correct ${spec.fieldPath}`,
  };
}

/** nearest is the candidate value closest to the one named, within the typo budget of similar names. */
function nearest(value: string, candidates: readonly string[]): string | undefined {
  const max = maxDistanceFor(value);
  let best: { v: string; d: number } | undefined;
  for (const v of candidates) {
    const d = editDistance(value, v, max);
    if (d <= max && (!best || d < best.d || (d === best.d && v < best.v))) best = { v, d };
  }
  return best?.v;
}
