import {
  deepFreeze,
  groupOfApiVersion,
  keyOf,
  kindKey,
  type CachedObject,
  type GroupKind,
  type KubeObject,
  type ObjectKey,
} from '../model';
import {
  projectFields,
  watchTargetKey,
  type InformerEvent,
  type InformerHandler,
  type InformerSource,
  type InformerSubscription,
  type ObjectStore,
  type WatchError,
  type WatchStatus,
  type WatchTarget,
} from './informer-source';

export interface MemoryInformerSourceOptions {
  /**
   * When a new watch primes: 'sync' at once, 'microtask' (default) after the
   * current task, or 'manual' when the test calls prime().
   */
  priming?: 'sync' | 'microtask' | 'manual';
  /**
   * Scopes as discovery would tell them: the kinds (`Kind.group`) listed here
   * are cluster-scoped, every other kind is namespaced, and the source
   * answers namespaced(). Undefined: the source cannot tell scopes.
   */
  clusterScoped?: readonly string[];
}

class MemoryInformer {
  readonly objects = new Map<ObjectKey, CachedObject>();
  /** Changes when a key enters or leaves objects (ObjectStore.keysVersion). */
  keysVersion = 0;
  readonly handlers = new Set<InformerHandler>();
  /** The handlers as an event reaches them: copied once per change of handlers, not once per event. */
  private reached: InformerHandler[] | undefined;
  primed = false;
  primedAt: number | undefined;
  lastError: WatchError | undefined;
  readonly startedAt = Date.now();
  stopped = false;

  constructor(
    readonly target: WatchTarget,
    readonly id: number,
  ) {}

  matches(object: CachedObject): boolean {
    if (object.kind !== this.target.kind || groupOfApiVersion(object.apiVersion) !== this.target.group) return false;
    if (this.target.namespace !== undefined && object.metadata.namespace !== this.target.namespace) return false;
    return this.target.labelSelector === undefined || labelsMatch(this.target.labelSelector, object.metadata.labels);
  }

  /** held is what this informer caches of a cluster object: the object, or its projection to the target's fields. */
  held(object: CachedObject): CachedObject {
    return this.target.fields ? deepFreeze(projectFields(object, this.target.fields)) : object;
  }

  addHandler(h: InformerHandler): void {
    this.handlers.add(h);
    this.reached = undefined;
  }

  deleteHandler(h: InformerHandler): void {
    this.handlers.delete(h);
    this.reached = undefined;
  }

  emit(event: InformerEvent): void {
    // A handler added or removed by a handler changes who the next event reaches, not this one.
    for (const h of (this.reached ??= [...this.handlers])) {
      try {
        h(event);
      } catch {
        // A throwing handler reaches no other handler.
      }
    }
  }

  status(): WatchStatus {
    return {
      target: this.target,
      phase: this.stopped ? 'Stopped' : this.primed ? 'Watching' : 'Listing',
      primed: this.primed,
      primedAt: this.primedAt,
      startedAt: this.startedAt,
      objects: this.objects.size,
      subscribers: this.handlers.size,
      lastError: this.lastError,
      watchesOpened: 1,
      lists: 1,
    };
  }
}

/**
 * MemoryInformerSource is an InformerSource over an in-memory "cluster", for
 * tests of the engine. It shares one informer per WatchTarget, ref-counted,
 * and counts how many are open so tests can check invariants 1 and 8.
 */
export class MemoryInformerSource implements InformerSource {
  private readonly cluster = new Map<ObjectKey, CachedObject>();
  private readonly informers = new Map<string, MemoryInformer>();
  private readonly priming: 'sync' | 'microtask' | 'manual';
  private nextId = 1;
  private uid = 1;
  /** Informers opened over the source's life (a restarted kind counts again). */
  opened = 0;
  /** The target key (watchTargetKey) of each informer opened, in order. */
  readonly openedTargets: string[] = [];
  /** Forbidden scopes: `Kind.group` (listing all namespaces) or `Kind.group/namespace`. */
  private readonly forbidden = new Set<string>();

  readonly namespaced?: (kind: GroupKind) => Promise<boolean | undefined>;

  constructor(opts: MemoryInformerSourceOptions = {}) {
    this.priming = opts.priming ?? 'microtask';
    if (opts.clusterScoped) {
      const cluster = new Set(opts.clusterScoped);
      this.namespaced = (kind) => Promise.resolve(!cluster.has(kindKey(kind)));
    }
  }

  acquire(target: WatchTarget, handler: InformerHandler): InformerSubscription {
    const id = watchTargetKey(target);
    let inf = this.informers.get(id);
    const fresh = !inf;
    if (!inf) {
      inf = new MemoryInformer(target, this.nextId++);
      this.opened++;
      this.openedTargets.push(id);
      this.informers.set(id, inf);
      // The "list": the informer's cache starts with what the cluster holds.
      for (const [key, obj] of this.cluster) if (inf.matches(obj)) inf.objects.set(key, inf.held(obj));
      inf.keysVersion++;
    }
    const informer = inf;
    if (!fresh) {
      // A late subscriber first sees the current state.
      for (const [key, object] of informer.objects) safe(handler, { type: 'added', key, object, old: undefined });
      if (informer.primed) safe(handler, { type: 'primed' });
    }
    informer.addHandler(handler);
    const denied = fresh ? this.denial(target) : undefined;
    if (denied) {
      // Like a reflector answered 403: an error, never primed.
      informer.lastError = denied;
      queueMicrotask(() => {
        if (!informer.stopped) informer.emit({ type: 'error', error: denied });
      });
    } else if (fresh) {
      if (this.priming === 'sync') this.primeInformer(informer);
      else if (this.priming === 'microtask') queueMicrotask(() => this.primeInformer(informer));
    }
    let released = false;
    const store: ObjectStore = {
      get: (key) => informer.objects.get(key),
      keys: () => informer.objects.keys(),
      values: () => informer.objects.values(),
      get size() {
        return informer.objects.size;
      },
      get keysVersion() {
        return informer.keysVersion;
      },
    };
    return {
      store,
      isPrimed: () => informer.primed,
      status: () => informer.status(),
      release: async () => {
        if (released) return;
        released = true;
        informer.deleteHandler(handler);
        if (informer.handlers.size === 0 && this.informers.get(id) === informer) {
          informer.stopped = true;
          this.informers.delete(id);
        }
      },
    };
  }

  watches(): WatchStatus[] {
    return [...this.informers.values()].map((i) => i.status());
  }

  /** openWatches counts running informers, optionally of one kind (`Kind.group`). */
  openWatches(kind?: string): number {
    let n = 0;
    for (const i of this.informers.values()) if (kind === undefined || kindKey(i.target) === kind) n++;
    return n;
  }

  async stop(): Promise<void> {
    for (const i of this.informers.values()) i.stopped = true;
    this.informers.clear();
  }

  /** prime marks the informers of a kind (or all) as holding their initial snapshot. */
  prime(kind?: string): void {
    for (const i of this.informers.values())
      if (kind === undefined || kindKey(i.target) === kind) this.primeInformer(i);
  }

  /**
   * forbid makes new watches of a kind answer 403 Forbidden: in all namespaces
   * (namespace omitted; namespaced watches still allowed), or in one namespace.
   */
  forbid(kind: string, namespace?: string): void {
    this.forbidden.add(namespace === undefined ? kind : `${kind}/${namespace}`);
  }

  private denial(target: WatchTarget): WatchError | undefined {
    const kind = kindKey(target);
    const scope = target.namespace === undefined ? kind : `${kind}/${target.namespace}`;
    if (!this.forbidden.has(scope)) return undefined;
    const missingRule: NonNullable<WatchError['missingRule']> = {
      verbs: ['list', 'watch'],
      apiGroup: target.group,
      resource: `${target.kind.toLowerCase()}s`,
    };
    if (target.namespace !== undefined) missingRule.namespace = target.namespace;
    const where = target.namespace === undefined ? 'at the cluster scope' : `in the namespace "${target.namespace}"`;
    return { reason: 'Forbidden', message: `cannot list ${kind} ${where}`, missingRule, at: Date.now() };
  }

  /** fail reports a watch error on the informers of a kind. */
  fail(kind: string, error: Omit<WatchError, 'at'>): void {
    for (const i of this.informers.values()) {
      if (kindKey(i.target) !== kind) continue;
      i.lastError = { ...error, at: Date.now() };
      i.emit({ type: 'error', error: i.lastError });
    }
  }

  /** recover ends the watch errors of a kind's informers, as a watch that opens again does. */
  recover(kind: string): void {
    for (const i of this.informers.values()) {
      if (kindKey(i.target) !== kind || !i.lastError) continue;
      i.lastError = undefined;
      i.emit({ type: 'recovered' });
    }
  }

  /**
   * apply creates or replaces an object in the cluster and tells the informers
   * that cover it. Like a reflector, it stores a frozen copy: the caller's
   * object stays its own.
   */
  apply(object: KubeObject): CachedObject {
    const key = keyOf(object);
    const old = this.cluster.get(key);
    const copy = structuredClone(object);
    copy.metadata.uid = old?.metadata.uid ?? object.metadata.uid ?? `uid-${this.uid++}`;
    copy.metadata.resourceVersion = String(this.uid++);
    const stored = deepFreeze(copy);
    this.cluster.set(key, stored);
    for (const i of this.informers.values()) {
      const prev = i.objects.get(key);
      if (!i.matches(stored)) {
        // Relabelled out of a label-selected watch: gone from it, as the API server says with a DELETED event.
        if (prev && i.objects.delete(key)) {
          i.keysVersion++;
          i.emit({ type: 'deleted', key, object: prev, old: undefined });
        }
        continue;
      }
      const held = i.held(stored);
      i.objects.set(key, held);
      if (!prev) i.keysVersion++;
      i.emit(
        prev ? { type: 'updated', key, object: held, old: prev } : { type: 'added', key, object: held, old: undefined },
      );
    }
    return stored;
  }

  /** delete removes an object from the cluster; returns whether it existed. */
  delete(key: ObjectKey): boolean {
    const old = this.cluster.get(key);
    if (!old) return false;
    this.cluster.delete(key);
    for (const i of this.informers.values()) {
      if (!i.objects.delete(key)) continue;
      i.keysVersion++;
      i.emit({ type: 'deleted', key, object: old, old: undefined });
    }
    return true;
  }

  get(key: ObjectKey): CachedObject | undefined {
    return this.cluster.get(key);
  }

  private primeInformer(i: MemoryInformer): void {
    if (i.primed || i.stopped) return;
    i.primed = true;
    i.primedAt = Date.now();
    i.emit({ type: 'primed' });
  }
}

function safe(handler: InformerHandler, event: InformerEvent): void {
  try {
    handler(event);
  } catch {
    // A throwing handler does not stop delivery to the others.
  }
}

/**
 * labelsMatch answers a watch's labelSelector in kubectl's text form, for the
 * requirements the memory source supports: `k=v`, `k==v`, `k!=v`, `k`, `!k`.
 */
function labelsMatch(text: string, labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const raw of text.split(',')) {
    const req = raw.trim();
    if (req === '') continue;
    const ne = req.indexOf('!=');
    const eq = req.indexOf('=');
    if (ne > 0) {
      if (labels?.[req.slice(0, ne).trim()] === req.slice(ne + 2).trim()) return false;
    } else if (eq > 0) {
      const value = req.slice(eq + (req[eq + 1] === '=' ? 2 : 1)).trim();
      if (labels?.[req.slice(0, eq).trim()] !== value) return false;
    } else if (req.startsWith('!')) {
      if (labels?.[req.slice(1).trim()] !== undefined) return false;
    } else if (labels?.[req] === undefined) return false;
  }
  return true;
}
