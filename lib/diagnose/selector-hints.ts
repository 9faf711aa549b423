import { requirementMatches, requirementText, type Labels, type Requirement, type Selector } from '../model';
import { editDistance } from './edit-distance';

/** plural names a kind in the plural for messages: Pods, NetworkPolicies, Ingresses. */
export function plural(kind: string, n = 2): string {
  if (n === 1) return kind;
  if (/[^aeiou]y$/.test(kind)) return `${kind.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(kind)) return `${kind}es`;
  return `${kind}s`;
}

/**
 * noMatchHint explains a selector that matches none of the objects whose
 * labels are given (the kind's objects where the selector looks): which
 * requirement no object meets, and the nearest label sets, as in
 * "3 Pods have app=web: did you mean app=web?". Undefined when there is no
 * object to compare with.
 */
export function noMatchHint(selector: Selector, labelSets: readonly Labels[], kind: string): string | undefined {
  if (labelSets.length === 0 || selector.requirements.length === 0) return undefined;
  const none = selector.requirements
    .filter((r) => !labelSets.some((l) => requirementMatches(r, l)))
    .map((r) => requirementText(r));
  // The nearest objects fail the fewest requirements; among them, what they carry where the selector asks.
  // Each object's failures are listed once: a namespace's hundred Pods are read once, not twice.
  const failures = labelSets.map((labels) => failed(selector, labels));
  let fewest = Infinity;
  for (const f of failures) fewest = Math.min(fewest, f.length);
  const groups = new Map<string, { n: number; r: Requirement; has: string | undefined }>();
  for (let i = 0; i < labelSets.length; i++) {
    const f = failures[i]!;
    if (f.length !== fewest) continue;
    const labels = labelSets[i]!;
    const r = f[0]!;
    const has = Object.hasOwn(labels, r.key) ? `${r.key}=${labels[r.key]}` : undefined;
    const id = `${requirementText(r)}|${has ?? ''}`;
    const g = groups.get(id);
    if (g) g.n++;
    else groups.set(id, { n: 1, r, has });
  }
  // Objects that carry the asked key say more (app=web for app=web-v2) than more objects without it.
  const nearest = [...groups.values()].sort(
    (a, b) => Number(b.has !== undefined) - Number(a.has !== undefined) || b.n - a.n,
  )[0];
  const parts: string[] = [];
  if (nearest) {
    const { n, r, has } = nearest;
    const who = `${n} ${plural(kind, n)}`;
    const also = fewest > 1 ? ` (and ${fewest - 1} more term${fewest > 2 ? 's' : ''} fail)` : '';
    if (r.operator === 'In' && has !== undefined) {
      parts.push(`${who} ${n === 1 ? 'has' : 'have'} ${has}${also}: did you mean ${has}?`);
    } else if (r.operator === 'In' || r.operator === 'Exists') {
      const similar = similarKey(r.key, labelSets);
      parts.push(
        `no ${kind} has the label ${r.key}${similar ? `; ${plural(kind)} have ${similar}: did you mean ${similar}?` : ''}`,
      );
    } else {
      parts.push(`${who} ${n === 1 ? 'has' : 'have'} ${has}, which ${requirementText(r)} excludes${also}`);
    }
  }
  if (none.length > 0 && !(nearest && none.length === 1 && none[0] === requirementText(nearest.r)))
    parts.push(`no ${kind} meets ${none.join(', ')}`);
  return parts.join('; ');
}

function failed(selector: Selector, labels: Labels): Requirement[] {
  return selector.requirements.filter((r) => !requirementMatches(r, labels));
}

/** similarKey finds a label key the objects carry that is a likely typo of key (App for app, ap for app). */
function similarKey(key: string, labelSets: readonly Labels[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.min(3, Math.max(1, Math.floor(key.length / 3)));
  const seen = new Set<string>();
  for (const labels of labelSets)
    for (const k of Object.keys(labels)) {
      if (seen.has(k)) continue;
      seen.add(k);
      const d = k.toLowerCase() === key.toLowerCase() ? 0.5 : editDistance(k, key, bestDistance);
      if (d <= bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
  return best;
}
