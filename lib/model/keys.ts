import { RefwatchError, err, ok, type Result } from './errors';
import { groupOfApiVersion, kindKey, parseApiVersion, parseKindKey, type GroupKind } from './gvk';
import { validateName, validateNamespace } from './validation';

/**
 * ObjectKey is the kubectl-style string that identifies an object everywhere
 * (API, URLs, logs):
 *   namespaced      `Kind.group/namespace/name`   Database.demo.refwatch.dev/shop/orders
 *   cluster-scoped  `Kind.group//name`            ClusterRole.rbac.authorization.k8s.io//view
 *   core group      `Kind/namespace/name`         Secret/shop/db-password
 */
export type ObjectKey = string;

/** ObjectRef is an ObjectKey taken apart. namespace is '' for cluster-scoped objects. */
export interface ObjectRef extends GroupKind {
  namespace: string;
  name: string;
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** usesPathSegmentNames: RBAC objects allow ':' in names (system:controller:…). */
export function usesPathSegmentNames(gk: GroupKind): boolean {
  return gk.group === RBAC_GROUP;
}

export function formatKey(ref: ObjectRef): ObjectKey {
  return `${kindKey(ref)}/${ref.namespace}/${ref.name}`;
}

/** parseKey parses and validates an ObjectKey. The error names the part at fault. */
export function parseKey(key: string, field = 'object'): Result<ObjectRef> {
  if (typeof key !== 'string' || key.length === 0) {
    return err(
      new RefwatchError('InvalidKey', `${field} is empty: give an object key Kind.group/namespace/name`, {
        field,
        example: 'Database.demo.refwatch.dev/shop/orders',
      }),
    );
  }
  const parts = key.split('/');
  if (parts.length !== 3) {
    return err(
      new RefwatchError(
        'InvalidKey',
        `${field} "${key}" must have three '/'-separated parts, Kind.group/namespace/name (leave namespace empty for cluster-scoped objects)`,
        { field, example: 'Database.demo.refwatch.dev/shop/orders' },
      ),
    );
  }
  const [kindPart, namespace, name] = parts as [string, string, string];
  const gk = parseKindKey(kindPart, `${field}.kind`);
  if (!gk.ok) return gk;
  if (namespace !== '') {
    const ns = validateNamespace(namespace, `${field}.namespace`);
    if (!ns.ok) return ns;
  }
  const n = validateName(name, `${field}.name`, usesPathSegmentNames(gk.value));
  if (!n.ok) return n;
  return ok({ ...gk.value, namespace, name });
}

// A DNS-1123 label, and a subdomain of such labels: written so that no character can be matched two ways,
// which keeps a failing match linear.
const LABEL = '[a-z0-9]+(?:-+[a-z0-9]+)*';
const SUBDOMAIN = `${LABEL}(?:\\.${LABEL})*`;
/**
 * PLAIN_KEY is the usual form of an ObjectKey: `Kind` (at most 63 letters and digits, the first uppercase) or
 * `Kind.group` (a subdomain of at most 253), a namespace (a label of at most 63) or none, and a name (a subdomain
 * of at most 253). The lookaheads bound each part's length before it is matched.
 */
const PLAIN_KEY = new RegExp(
  `^[A-Z][A-Za-z0-9]{0,62}(?:\\.(?=[^/]{1,253}/)${SUBDOMAIN})?/(?:(?=[^/]{1,63}/)${LABEL})?/(?=.{1,253}$)${SUBDOMAIN}$`,
);

/**
 * isPlainKey says whether key is an ObjectKey of the usual form (PLAIN_KEY),
 * in one match that allocates nothing. It is parseKey's fast path, for the hot
 * paths that validate every new reference: a key it accepts, parseKey accepts
 * too. One it refuses is for parseKey to judge and explain: a malformed key,
 * or a rarer form (an RBAC kind's name outside DNS, such as
 * system:aggregate-to-view; an empty group after the dot).
 *
 * A regular expression, not a loop over the characters: V8 compiles it to
 * machine code once, where a loop run for every new reference is hot enough
 * for V8's optimizing compiler. In one 1,000-App round of bench/peer that
 * compiler spent 46 ms on the loop (as --trace-opt reports it), where
 * validating the round's 4,000 new references takes some 14 ms.
 */
export function isPlainKey(key: string): boolean {
  return typeof key === 'string' && PLAIN_KEY.test(key);
}

/** isKey reports whether s parses as an ObjectKey. */
export function isKey(s: string): boolean {
  return parseKey(s).ok;
}

/** KeyParts is an ObjectKey cut at its separators, unvalidated; kind is `Kind.group` as written. */
export interface KeyParts {
  kind: string;
  namespace: string;
  name: string;
}

/**
 * splitKey cuts a key at its first two '/' without validating it, or gives undefined when it has fewer:
 * for keys refwatch made itself (parseKey is for input). The name is all after the second '/'.
 */
export function splitKey(key: ObjectKey): KeyParts | undefined {
  const a = key.indexOf('/');
  const b = a < 0 ? -1 : key.indexOf('/', a + 1);
  return b < 0 ? undefined : { kind: key.slice(0, a), namespace: key.slice(a + 1, b), name: key.slice(b + 1) };
}

/** kindOfKey returns the `Kind.group` part of a key without validating it (the whole string if it has no '/'). */
export function kindOfKey(key: ObjectKey): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

/** namespaceOfKey returns the namespace part of a key ('' for cluster-scoped) without validating it. */
export function namespaceOfKey(key: ObjectKey): string {
  const a = key.indexOf('/');
  const b = key.indexOf('/', a + 1);
  return a < 0 || b < 0 ? '' : key.slice(a + 1, b);
}

const sharedCopies = new Map<string, string>();
const MAX_SHARED = 10_000;

/**
 * shared returns one kept copy of a short string that many long-lived records
 * repeat, such as a kind or a namespace sliced out of a key. Each slice is a
 * new string; a record that stores the slice keeps it (and the key it points
 * into) for as long as the record lives, while the shared copy costs nothing
 * per record. The table is bounded: past MAX_SHARED distinct strings, a string
 * is returned as it came.
 */
export function shared(s: string): string {
  const kept = sharedCopies.get(s);
  if (kept !== undefined) return kept;
  if (sharedCopies.size < MAX_SHARED) sharedCopies.set(s, s);
  return s;
}

/** nameOfKey returns the name part of a key without validating it. */
export function nameOfKey(key: ObjectKey): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/** keyHasKind tells whether key has a '/' and `kind` before the first one; it copies no string, for hot paths. */
export function keyHasKind(key: ObjectKey, kind: string): boolean {
  return key.indexOf('/') === kind.length && key.startsWith(kind);
}

/** keyHasNamespace tells whether key has two '/' and `namespace` between them; it copies no string, for hot paths. */
export function keyHasNamespace(key: ObjectKey, namespace: string): boolean {
  const a = key.indexOf('/');
  return a >= 0 && key.indexOf('/', a + 1) === a + 1 + namespace.length && key.startsWith(namespace, a + 1);
}

/** The minimal shape of a Kubernetes object that refwatch reads. Objects are kept as raw JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

/** keyOf computes an object's key from its apiVersion, kind and metadata. */
export function keyOf(obj: KubeObject): ObjectKey {
  return formatKey({
    group: groupOfApiVersion(obj.apiVersion),
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name,
  });
}

/** keyOfChecked is keyOf with validation, for objects from outside. */
export function keyOfChecked(obj: KubeObject): Result<ObjectKey> {
  const gv = parseApiVersion(obj.apiVersion);
  if (!gv.ok) return gv;
  const key = formatKey({
    group: gv.value.group,
    kind: obj.kind,
    namespace: obj.metadata?.namespace ?? '',
    name: obj.metadata?.name ?? '',
  });
  const parsed = parseKey(key);
  return parsed.ok ? ok(key) : parsed;
}
