/**
 * Unpublished holds the latest entity of each id while the change log defers
 * its kind (ChangeLog.defer): one object per id, written over in place, where
 * the log would keep a new version at every write. Nothing outside its owner
 * ever sees these objects; drain hands copies to the log when it stops deferring.
 */
export class Unpublished<E extends object> {
  readonly #byId = new Map<string, E>();

  get(id: string): E | undefined {
    return this.#byId.get(id);
  }

  /**
   * write makes `next` the entity of `id`: into the object held, field by field (a field `next` lacks is
   * left undefined), so that `next` itself, a value built for this one call, outlives nothing.
   */
  write(id: string, next: E): void {
    const held = this.#byId.get(id) as Record<string, unknown> | undefined;
    if (held === undefined) {
      this.#byId.set(id, next);
      return;
    }
    for (const field in held) if (!Object.hasOwn(next, field)) held[field] = undefined;
    Object.assign(held, next);
  }

  delete(id: string): void {
    this.#byId.delete(id);
  }

  /** drain hands each entity held, without its undefined fields, to `put`, and forgets them all. */
  drain(put: (id: string, entity: E) => void): void {
    const held = [...this.#byId];
    this.#byId.clear();
    for (const [id, e] of held) put(id, Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as E);
  }
}
