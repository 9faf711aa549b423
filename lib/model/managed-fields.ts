/** One metadata.managedFields entry, as far as refwatch reads it. */
interface ManagedFieldsEntry {
  manager?: unknown;
  time?: unknown;
}

/**
 * lastManager names the field manager that changed an object last (e.g.
 * `kubectl-client-side-apply`, `helm`): the managedFields entry with the
 * latest time, the first one on a tie or without times. Undefined when the
 * object carries no managedFields.
 */
export function lastManager(metadata: { readonly [field: string]: unknown }): string | undefined {
  const entries = metadata.managedFields;
  if (!Array.isArray(entries)) return undefined;
  let best: ManagedFieldsEntry | undefined;
  for (const e of entries as ManagedFieldsEntry[]) {
    if (typeof e?.manager !== 'string') continue;
    if (!best || (typeof e.time === 'string' && typeof best.time === 'string' && e.time > best.time)) best = e;
  }
  return best?.manager as string | undefined;
}

const interned = new Map<string, string>();

/**
 * keepLastManager is what a cache keeps of managedFields: the last manager's
 * name alone, as a one-entry managedFields, its string shared by every object
 * of that manager. The rest is large and unread.
 */
export function keepLastManager(
  metadata: Record<string, unknown> & { managedFields?: unknown },
): { manager: string }[] | undefined {
  const name = lastManager(metadata);
  if (name === undefined) return undefined;
  let shared = interned.get(name);
  if (shared === undefined) {
    // A manager name is a client's choice; a bounded table keeps a misbehaving one from growing it for ever.
    if (interned.size < 1000) interned.set(name, name);
    shared = name;
  }
  return [{ manager: shared }];
}
