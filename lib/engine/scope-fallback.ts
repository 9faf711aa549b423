/**
 * FallbackNamespace is a namespace to watch a kind in when listing it in all
 * namespaces is Forbidden, as kubectl falls back to its context's namespace,
 * and where that namespace came from ("the context", "--namespaces").
 */
export interface FallbackNamespace {
  namespace: string;
  from: string;
}

/**
 * ScopeFallback says that a kind is watched in fewer places than asked: its
 * cluster-wide list was Forbidden, so it is watched in the fallback
 * namespaces (a controller's own kind) or in each namespace its referents
 * live in (a referent kind).
 */
export interface ScopeFallback {
  kind: string;
  /** The fallback namespaces; undefined: each namespace the kind's referents live in. */
  namespaces?: readonly FallbackNamespace[];
  /** "Pod: cluster-wide list forbidden; watching namespace team-a (from the context)". */
  message: string;
  at: number;
}

/** fallbackMessage words a ScopeFallback for logs, /readyz and the Cluster panel. */
export function fallbackMessage(kind: string, namespaces: readonly FallbackNamespace[] | undefined): string {
  const named = (n: FallbackNamespace) => `${n.namespace} (from ${n.from})`;
  const where = !namespaces
    ? 'watching each namespace its referents live in'
    : namespaces.length === 1
      ? `watching namespace ${named(namespaces[0]!)}`
      : `watching namespaces ${namespaces.map(named).join(', ')}`;
  return `${kind}: cluster-wide list forbidden; ${where}`;
}
