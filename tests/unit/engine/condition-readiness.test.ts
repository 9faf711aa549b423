import { describe, expect, it } from 'vitest';
import { conditionReadiness } from '@/lib/engine';
import type { CachedObject } from '@/lib/model';

const db = (conditions?: unknown[]): CachedObject =>
  ({
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'Database',
    metadata: { name: 'orders', namespace: 'shop' },
    ...(conditions ? { status: { conditions } } : {}),
  }) as CachedObject;

describe('conditionReadiness', () => {
  const ready = conditionReadiness('Ready');

  it('judges by the first condition of its type, every answer with the same four fields', () => {
    expect(
      ready(
        db([
          { type: 'Synced', status: 'False' },
          { type: 'Ready', status: 'True' },
        ]),
      ),
    ).toEqual({
      ready: true,
      condition: 'Ready',
      reason: undefined,
      message: undefined,
    });
    expect(
      ready(
        db([
          { type: 'Ready', status: 'False', reason: 'Provisioning', message: 'creating the volume' },
          { type: 'Ready', status: 'True' },
        ]),
      ),
    ).toEqual({ ready: false, condition: 'Ready', reason: 'Provisioning', message: 'creating the volume' });
    expect(ready(db([{ type: 'Ready', status: 'Unknown' }]))).toEqual({
      ready: false,
      condition: 'Ready',
      reason: 'Ready=Unknown',
      message: undefined,
    });
    expect(ready(db())).toEqual({
      ready: false,
      condition: 'Ready',
      reason: 'ConditionMissing',
      message: 'no Ready condition yet',
    });
  });

  it('shares one frozen answer for Ready and one for a missing condition', () => {
    const a = ready(db([{ type: 'Ready', status: 'True' }]));
    expect(ready(db([{ type: 'Ready', status: 'True' }]))).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    const m = ready(db([{ type: 'Other', status: 'True' }]));
    expect(ready(db())).toBe(m);
    expect(Object.isFrozen(m)).toBe(true);
    // Another predicate has answers of its own: they name its condition.
    expect(conditionReadiness('Available')(db())).toMatchObject({ condition: 'Available' });
  });
});
