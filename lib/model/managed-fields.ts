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

const lastEntries = new Map<string, readonly { readonly manager: string }[]>();

/**
 * keepLastManager is what a cache keeps of managedFields: the last manager's
 * name alone, as a one-entry managedFields. The entry is frozen and shared by
 * every object of that manager, as cached objects are frozen anyway: a cache
 * of thousands of objects written by a handful of managers holds a handful of
 * them, not one array and one object per object version.
 */
export function keepLastManager(
  metadata: Record<string, unknown> & { managedFields?: unknown },
): readonly { readonly manager: string }[] | undefined {
  const name = lastManager(metadata);
  if (name === undefined) return undefined;
  let shared = lastEntries.get(name);
  if (shared === undefined) {
    shared = Object.freeze([Object.freeze({ manager: name })]);
    // A manager name is a client's choice; a bounded table keeps a misbehaving one from growing it for ever.
    if (lastEntries.size < 1000) lastEntries.set(name, shared);
  }
  return shared;
}

/**
 * trimManagedFields is compactMetadata for metadata the caller owns and has
 * just parsed: managedFields is replaced in the object itself by
 * keepLastManager's entry, which keeps the shape JSON.parse gave it (shared
 * by every object parsed with the same fields) and copies nothing. Only when
 * no entry names a manager, so that the field must go, is the metadata
 * copied without it (compactMetadata), as a `delete` would turn the object
 * into a hash table. Metadata without managedFields is returned as it is.
 */
export function trimManagedFields<M extends Record<string, unknown>>(
  metadata: M,
): M & { managedFields?: readonly { readonly manager: string }[] } {
  if (!('managedFields' in metadata)) return metadata;
  const last = keepLastManager(metadata);
  if (!last) return compactMetadata(metadata);
  (metadata as Record<string, unknown>).managedFields = last;
  return metadata;
}

/**
 * compactMetadata is metadata as a cache keeps it: without managedFields
 * (but keepLastManager's entry) and without the fields drop names. It copies
 * the other fields one by one, in their order, into a new object: a rest and
 * spread copy would allocate twice per object, and its copies take shapes of
 * their own that freezing copies once more, where a field-by-field copy takes
 * the shared shape of every other object of its kind (an App's cached version,
 * metadata and all, is about a third smaller for it). A `__proto__` field,
 * which JSON.parse makes an own property, is not copied, so that it can never
 * set the copy's prototype.
 */
export function compactMetadata<M extends Record<string, unknown>>(
  metadata: M,
  drop?: (field: string) => boolean,
): M & { managedFields?: readonly { readonly manager: string }[] } {
  const out: Record<string, unknown> = {};
  for (const k in metadata) {
    if (k === 'managedFields' || k === '__proto__' || !Object.hasOwn(metadata, k) || drop?.(k)) continue;
    out[k] = metadata[k];
  }
  const last = keepLastManager(metadata);
  if (last) out.managedFields = last;
  return out as M & { managedFields?: readonly { readonly manager: string }[] };
}
