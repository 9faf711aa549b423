/**
 * Field sets in managedFields' FieldsV1 form. A path is a list of path
 * elements, each spelled as FieldsV1 spells it: `f:name` (a field), `k:{…}`
 * (a list-map item by its keys), `v:…` (a set item by its value), `i:N` (an
 * index). A set holds the paths that are members, as structured-merge-diff's
 * fieldpath.Set does: a node with children is a member only when it is
 * owned itself (FieldsV1's `.` key).
 */

export type Path = readonly string[];

const keyOf = (p: Path): string => JSON.stringify(p);

/** FieldSet is a set of paths; the paths are compared as sequences of path elements. */
export class FieldSet {
  private readonly paths = new Map<string, Path>();

  constructor(paths: Iterable<Path> = []) {
    for (const p of paths) this.add(p);
  }

  add(p: Path): this {
    this.paths.set(keyOf(p), p);
    return this;
  }

  has(p: Path): boolean {
    return this.paths.has(keyOf(p));
  }

  get size(): number {
    return this.paths.size;
  }

  get empty(): boolean {
    return this.paths.size === 0;
  }

  /** The paths, shortest first, then in FieldsV1 order, so a parent always comes before its children. */
  list(): Path[] {
    return [...this.paths.values()].sort((a, b) => a.length - b.length || keyOf(a).localeCompare(keyOf(b)));
  }

  union(other: FieldSet): FieldSet {
    return new FieldSet([...this.paths.values(), ...other.paths.values()]);
  }

  difference(other: FieldSet): FieldSet {
    return new FieldSet([...this.paths.values()].filter((p) => !other.has(p)));
  }

  intersection(other: FieldSet): FieldSet {
    return new FieldSet([...this.paths.values()].filter((p) => other.has(p)));
  }

  /** without drops the paths that filter matches. */
  without(filter: (p: Path) => boolean): FieldSet {
    return new FieldSet([...this.paths.values()].filter((p) => !filter(p)));
  }

  /** hasUnder says whether a member lies strictly below prefix. */
  hasUnder(prefix: Path): boolean {
    for (const p of this.paths.values()) if (p.length > prefix.length && startsWith(p, prefix)) return true;
    return false;
  }

  equals(other: FieldSet): boolean {
    return this.size === other.size && [...this.paths.keys()].every((k) => other.paths.has(k));
  }
}

export function startsWith(p: Path, prefix: Path): boolean {
  return prefix.length <= p.length && prefix.every((e, i) => p[i] === e);
}

type FieldsV1 = { [element: string]: FieldsV1 };

/** toFieldsV1 spells a set as metadata.managedFields[].fieldsV1 does. */
export function toFieldsV1(set: FieldSet): FieldsV1 {
  const root: FieldsV1 = {};
  const members: FieldsV1[] = [];
  for (const path of set.list()) {
    let node = root;
    for (const e of path) node = node[e] ??= {};
    members.push(node);
  }
  // A member with children says so with `.`; a member without children is the empty object itself.
  for (const node of members) if (Object.keys(node).some((k) => k !== '.')) node['.'] = {};
  return root;
}

/** fromFieldsV1 reads a fieldsV1 object; anything that is not one is an empty set. */
export function fromFieldsV1(fields: unknown): FieldSet {
  const set = new FieldSet();
  const walk = (node: unknown, path: string[]) => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
    const entries = Object.entries(node);
    if (path.length > 0 && (entries.length === 0 || '.' in node)) set.add(path);
    for (const [e, child] of entries) if (e !== '.') walk(child, [...path, e]);
  };
  walk(fields, []);
  return set;
}

/** fieldElement is the path element of a field. */
export const fieldElement = (name: string): string => `f:${name}`;

/** keyElement is the path element of a list-map item: its key fields, sorted by name, as JSON. */
export function keyElement(keys: Record<string, unknown>): string {
  const sorted = Object.fromEntries(
    Object.keys(keys)
      .sort()
      .map((k) => [k, keys[k]]),
  );
  return `k:${JSON.stringify(sorted)}`;
}

/** valueElement is the path element of a set item. */
export const valueElement = (value: unknown): string => `v:${JSON.stringify(value)}`;

/** pathString spells a path as kube-apiserver's conflict messages do: `.spec.containers[name="app"].image`. */
export function pathString(path: Path): string {
  return path
    .map((e) => {
      const body = e.slice(2);
      switch (e.slice(0, 2)) {
        case 'f:':
          return `.${body}`;
        case 'k:': {
          const keys = JSON.parse(body) as Record<string, unknown>;
          return `[${Object.entries(keys)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(',')}]`;
        }
        case 'v:':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}
