import type { KubeObject } from './keys';

/**
 * DeepReadonly is T with every property, array, map and set read-only all the
 * way down: the type of what a shared cache hands out. A reader that wants a
 * changed object builds a new one (a spread, a patch) instead.
 */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyMap<infer K, infer V>
    ? ReadonlyMap<DeepReadonly<K>, DeepReadonly<V>>
    : T extends ReadonlySet<infer V>
      ? ReadonlySet<DeepReadonly<V>>
      : T extends readonly (infer E)[]
        ? readonly DeepReadonly<E>[]
        : T extends object
          ? { readonly [P in keyof T]: DeepReadonly<T[P]> }
          : T;

/** CachedObject is a Kubernetes object as a cache holds it: frozen, shared by every reader, never copied per read. */
export type CachedObject = DeepReadonly<KubeObject>;

/**
 * deepFreeze freezes value and everything it reaches, in place, and returns
 * it. A frozen subtree is taken as frozen throughout, so freezing an object
 * that shares parts with one frozen before costs only its new parts.
 */
export function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    // Walked in place: Object.values would allocate an array for every object of every event.
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
    else for (const k in value) if (Object.hasOwn(value, k)) deepFreeze(value[k]);
  }
  return value as DeepReadonly<T>;
}

/**
 * deepFreezeLike is deepFreeze for a newly parsed object, given `like`, an object it resembles (the version of the
 * same object it replaces, or another object of its kind). On its way it replaces each string equal to the string
 * at the same place in `like` by that very string, so that a new version holds one copy of what did not change
 * (its name, namespace, uid, timestamps, references) instead of a copy of its own. Nothing readable changes: the
 * strings are equal. `value` must be acyclic, as parsed JSON is. Numbers, booleans and nulls are left as they
 * are, without a call or a lookup in `like`: the reflector freezes every object of every event this way.
 */
export function deepFreezeLike<T>(value: T, like: unknown): DeepReadonly<T> {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value as DeepReadonly<T>;
  if (typeof like !== 'object' || like === null) return deepFreeze(value);
  const v = value as Record<string, unknown>;
  const l = like as Record<string, unknown>;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'string') {
        if (x === l[i]) v[i] = l[i];
      } else if (typeof x === 'object' && x !== null) deepFreezeLike(x, l[i]);
    }
  } else {
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const x = v[k];
      if (typeof x === 'string') {
        // v's own property is written, so a key "__proto__" (own, from JSON.parse) sets no prototype.
        if (x === l[k]) v[k] = l[k];
      } else if (typeof x === 'object' && x !== null) deepFreezeLike(x, Object.hasOwn(l, k) ? l[k] : undefined);
    }
  }
  Object.freeze(value);
  return value as DeepReadonly<T>;
}
