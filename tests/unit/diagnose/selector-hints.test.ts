import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { noMatchHint, plural } from '@/lib/diagnose/selector-hints';
import { labelsArbitrary, requirementArbitrary } from '../model/selector-arbitraries';
import { requirementMatches, requirementText, type Labels, type Requirement, type Selector } from '@/lib/model';

/**
 * The hint as first written: each object's failures listed, and the groups keyed by a string built per
 * object. noMatchHint now counts instead of listing, so that a Service selecting nothing allocates nothing
 * per Pod of its namespace; it must say exactly what this says. (Its similar-key search is shared and
 * reached the same way, so the model leaves it out: the generated keys are never near-misses of each other.)
 */
function modelHint(selector: Selector, labelSets: readonly Labels[], kind: string): string | undefined {
  if (labelSets.length === 0 || selector.requirements.length === 0) return undefined;
  const failed = (labels: Labels) => selector.requirements.filter((r) => !requirementMatches(r, labels));
  const none = selector.requirements
    .filter((r) => !labelSets.some((l) => requirementMatches(r, l)))
    .map((r) => requirementText(r));
  const failures = labelSets.map(failed);
  let fewest = Infinity;
  for (const f of failures) fewest = Math.min(fewest, f.length);
  const groups = new Map<string, { n: number; r: Requirement; has: string | undefined }>();
  labelSets.forEach((labels, i) => {
    const f = failures[i]!;
    if (f.length !== fewest) return;
    const r = f[0]!;
    const has = Object.hasOwn(labels, r.key) ? `${r.key}=${labels[r.key]}` : undefined;
    const id = `${requirementText(r)}|${has ?? ''}`;
    const g = groups.get(id);
    if (g) g.n++;
    else groups.set(id, { n: 1, r, has });
  });
  const nearest = [...groups.values()].sort(
    (a, b) => Number(b.has !== undefined) - Number(a.has !== undefined) || b.n - a.n,
  )[0];
  const parts: string[] = [];
  if (nearest) {
    const { n, r, has } = nearest;
    const who = `${n} ${plural(kind, n)}`;
    const also = fewest > 1 ? ` (and ${fewest - 1} more term${fewest > 2 ? 's' : ''} fail)` : '';
    if (r.operator === 'In' && has !== undefined)
      parts.push(`${who} ${n === 1 ? 'has' : 'have'} ${has}${also}: did you mean ${has}?`);
    else if (r.operator === 'In' || r.operator === 'Exists') parts.push(`no ${kind} has the label ${r.key}`);
    else parts.push(`${who} ${n === 1 ? 'has' : 'have'} ${has}, which ${requirementText(r)} excludes${also}`);
  }
  if (none.length > 0 && !(nearest && none.length === 1 && none[0] === requirementText(nearest.r)))
    parts.push(`no ${kind} meets ${none.join(', ')}`);
  return parts.join('; ');
}

// Keys far apart in spelling, so that no "did you mean" key suggestion enters either answer.
const KEYS = ['app', 'tier', 'zone-name', 'canary'];
const VALUES = ['web', 'api', 'db', 'x'];
const requirement = requirementArbitrary(KEYS, VALUES, 3);
const labels = labelsArbitrary(KEYS, VALUES);

describe('noMatchHint', () => {
  it('says what the straightforward listing of every object’s failures says, for any selector and objects', () => {
    fc.assert(
      fc.property(
        fc.array(requirement, { minLength: 1, maxLength: 4 }),
        fc.array(labels, { maxLength: 12 }),
        (terms, sets) => {
          const selector: Selector = { requirements: terms, text: terms.map((r) => requirementText(r)).join(',') };
          // A hint explains a selector that matches none of the objects.
          fc.pre(!sets.some((l) => terms.every((r) => requirementMatches(r, l))));
          const hint = noMatchHint(selector, sets, 'Pod');
          // The key suggestion is the only part the model leaves out: compare what comes before it.
          const model = modelHint(selector, sets, 'Pod');
          expect(hint?.replace(/; Pods have [^:]*: did you mean [^?]*\?/, '')).toBe(model);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('names the nearest objects and what they carry, as a Service selecting nothing is explained', () => {
    const selector: Selector = {
      requirements: [{ key: 'app', operator: 'In', values: ['web-v2'] }],
      text: 'app=web-v2',
    };
    const pods: Labels[] = [{ app: 'web', tier: 'front' }, { app: 'web' }, { app: 'api' }, { tier: 'back' }];
    expect(noMatchHint(selector, pods, 'Pod')).toBe('2 Pods have app=web: did you mean app=web?');
  });
});
