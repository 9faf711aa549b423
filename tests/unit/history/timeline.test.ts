import { describe, expect, it } from 'vitest';
import { describeStored } from '@/components/panels/timeline';

describe('the details panel timeline', () => {
  it('says what each stored transition means, with the manager that made a referent change', () => {
    const base = { id: 1, at: 0 };
    expect(
      describeStored({
        ...base,
        type: 'referent',
        object: 'Secret/shop/db-password',
        state: 'NotFound',
        manager: 'kubectl-client-side-apply',
      }),
    ).toBe('Secret db-password deleted (by kubectl-client-side-apply)');
    expect(
      describeStored({ ...base, type: 'referent', object: 'Secret/shop/db-password', state: 'Ready', manager: 'helm' }),
    ).toBe('Secret db-password Ready (by helm)');
    expect(
      describeStored({
        ...base,
        type: 'referent',
        object: 'Secret/shop/db-password',
        state: 'NotFound',
        reason: 'WhileDown',
      }),
    ).toBe('Secret db-password deleted while refwatch was down');
    expect(
      describeStored({
        ...base,
        type: 'referrer',
        object: 'Pod/shop/web',
        state: 'NotFound',
        related: 'Secret/shop/db-password',
      }),
    ).toBe('Pod web NotFound on Secret db-password');
    expect(
      describeStored({
        ...base,
        type: 'reference',
        object: 'Pod/shop/web',
        state: 'Added',
        related: 'Secret/shop/db-password',
      }),
    ).toBe('Pod web started naming Secret db-password');
  });
});
