import { formatKey, parseKey, validateName, validateNamespace, type GroupKind, type ObjectKey } from '../model';
import { CliError } from './errors';

/**
 * ObjectArg is the OBJECT argument as typed: a refwatch key
 * (`Pod/shop/web`, `App.demo.refwatch.dev/shop/web`, `ClusterRole.rbac.authorization.k8s.io//view`)
 * or kubectl's `TYPE/NAME` (`pod/web`, `apps.demo.refwatch.dev/web`, `App/web`),
 * also given as two words `TYPE NAME`. TYPE is resolved to a kind later,
 * through discovery or the server's snapshot.
 */
export type ObjectArg = { form: 'key'; key: ObjectKey } | { form: 'type'; type: string; name: string };

const EXAMPLES = 'pod/web -n shop, App.demo.refwatch.dev/shop/web or "pod web"';

/** parseObjectArg reads OBJECT (and an optional NAME after it); the error says what to type. */
export function parseObjectArg(text: string, name?: string): ObjectArg {
  if (text === '') throw new CliError(`argument OBJECT is empty: give an object such as ${EXAMPLES}`);
  const parts = text.split('/');
  if (name !== undefined) {
    if (parts.length !== 1)
      throw new CliError(
        `give OBJECT as TYPE/NAME or as TYPE NAME, not both ("${text} ${name}"); for example ${EXAMPLES}`,
      );
    return typed(text, name, text);
  }
  if (parts.length === 3) {
    const r = parseKey(text, 'OBJECT');
    if (!r.ok) throw new CliError(`argument ${r.error.message}; for example Pod/shop/web`);
    return { form: 'key', key: formatKey(r.value) };
  }
  if (parts.length === 2) return typed(parts[0]!, parts[1]!, text);
  throw new CliError(
    `argument OBJECT "${text}" is not TYPE/NAME nor a key Kind.group/namespace/name; for example ${EXAMPLES}`,
  );
}

function typed(type: string, name: string, text: string): ObjectArg {
  if (!/^[A-Za-z][A-Za-z0-9-]*(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(type)) {
    throw new CliError(
      `argument OBJECT "${text}": "${type}" is not a resource type (pod, pods, po, App, apps.demo.refwatch.dev); for example ${EXAMPLES}`,
    );
  }
  if (name === '') throw new CliError(`argument OBJECT "${text}" has no name after the type; for example ${EXAMPLES}`);
  return { form: 'type', type, name };
}

/** ResolvedKind is what a TYPE names: a kind and whether its objects live in namespaces. */
export interface ResolvedKind extends GroupKind {
  namespaced: boolean;
}

/** keyOfTyped builds the key of TYPE/NAME once TYPE is resolved; cluster-scoped kinds ignore the namespace. */
export function keyOfTyped(kind: ResolvedKind, name: string, namespace: string): ObjectKey {
  const ns = kind.namespaced ? namespace : '';
  if (ns !== '') {
    const v = validateNamespace(ns, '--namespace');
    if (!v.ok) throw new CliError(`flag ${v.error.message}`);
  }
  const n = validateName(name, 'OBJECT name');
  if (!n.ok) throw new CliError(`argument ${n.error.message}`);
  return formatKey({ group: kind.group, kind: kind.kind, namespace: ns, name });
}

/** DiscoveredResource is one row of a discovery document, as kubectl matches TYPE against it. */
export interface DiscoveredResource extends ResolvedKind {
  resource: string;
  singularName?: string;
  shortNames?: string[];
}

/**
 * matchResource finds what TYPE names among resources, as kubectl does:
 * plural, singular, short name or kind, case-insensitive, optionally
 * followed by `.group` (or the start of a group: `deployments.apps`).
 */
export function matchResource(resources: readonly DiscoveredResource[], type: string): DiscoveredResource[] {
  const dot = type.indexOf('.');
  const word = (dot < 0 ? type : type.slice(0, dot)).toLowerCase();
  const group = dot < 0 ? undefined : type.slice(dot + 1).toLowerCase();
  const found = resources.filter((r) => {
    if (group !== undefined && r.group !== group && !r.group.startsWith(group + '.')) return false;
    return (
      r.resource === word ||
      r.singularName === word ||
      r.kind.toLowerCase() === word ||
      (r.shortNames ?? []).includes(word)
    );
  });
  // The core group wins a tie, as in kubectl (`pods` before any CRD named pods).
  return found.sort((a, b) => (a.group === '' ? -1 : b.group === '' ? 1 : a.group < b.group ? -1 : 1));
}
