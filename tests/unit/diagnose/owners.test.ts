import { describe, expect, it } from 'vitest';
import type { StuckEntry } from '@/lib/changelog';
import { markWorkloadsSteps } from '@/lib/diagnose/owners';
import type { DiagnosisSource } from '@/lib/diagnose/source';

describe('markWorkloadsSteps', () => {
  it('yields while it indexes the entries, not only while it marks them', () => {
    // Entries with no cause: the marking pass reads no owner, so every yield is the generator's own stepping.
    const entries = Array.from(
      { length: 100 },
      (_, i) => ({ id: `watch|Pod/shop/p${i}`, key: `Pod/shop/p${i}` }) as unknown as StuckEntry,
    );
    const manager = {} as DiagnosisSource;
    let yields = 0;
    for (const steps = markWorkloadsSteps(manager, entries, 10); !steps.next().done;) yields++;
    // Ten in each pass of a hundred entries: a hundred thousand stuck referrers are indexed in steps too.
    expect(yields).toBe(20);
  });
});
