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
