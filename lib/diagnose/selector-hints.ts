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
  const terms = selector.requirements;
  if (labelSets.length === 0 || terms.length === 0) return undefined;
  const texts = terms.map((r) => requirementText(r));
  const none = texts.filter((_, i) => !labelSets.some((l) => requirementMatches(terms[i]!, l)));
  // The nearest objects fail the fewest requirements; among them, what they carry where the selector asks.
  // Counted, not listed: a namespace's hundred Pods are read twice and allocate nothing each, as a Service
  // matching nothing is explained again on every reconcile.
  let fewest = Infinity;
  for (const labels of labelSets) fewest = Math.min(fewest, failures(terms, labels, fewest));
  // Grouped by the first requirement they fail and the value they carry under its key, in the order first met.
  const groups: HintGroup[] = [];
  const byText = new Map<string, Map<string | undefined, HintGroup>>();
  for (const labels of labelSets) {
    if (failures(terms, labels, fewest) !== fewest) continue;
    const i = terms.findIndex((r) => !requirementMatches(r, labels));
    const r = terms[i]!;
    const value = Object.hasOwn(labels, r.key) ? String(labels[r.key]) : undefined;
    let values = byText.get(texts[i]!);
    if (!values) byText.set(texts[i]!, (values = new Map()));
    const g = values.get(value);
    if (g) g.n++;
    else {
      const group = { n: 1, r, text: texts[i]!, value };
      values.set(value, group);
      groups.push(group);
    }
  }
  // Objects that carry the asked key say more (app=web for app=web-v2) than more objects without it.
  const nearest = groups.sort((a, b) => Number(b.value !== undefined) - Number(a.value !== undefined) || b.n - a.n)[0];
  const parts: string[] = [];
  if (nearest) {
    const { n, r } = nearest;
    const has = nearest.value === undefined ? undefined : `${r.key}=${nearest.value}`;
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
      parts.push(`${who} ${n === 1 ? 'has' : 'have'} ${has}, which ${nearest.text} excludes${also}`);
    }
  }
  if (none.length > 0 && !(nearest && none.length === 1 && none[0] === nearest.text))
    parts.push(`no ${kind} meets ${none.join(', ')}`);
  return parts.join('; ');
}

/** HintGroup is the objects that fail the same requirement first and carry the same value under its key. */
interface HintGroup {
  n: number;
  readonly r: Requirement;
  readonly text: string;
  /** The value under the requirement's key; undefined when they do not carry the key. */
  readonly value: string | undefined;
}

/** failures counts the requirements the labels fail, stopping once the count passes `enough`. */
function failures(terms: readonly Requirement[], labels: Labels, enough: number): number {
  let n = 0;
  for (const r of terms) if (!requirementMatches(r, labels) && ++n > enough) return n;
  return n;
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
