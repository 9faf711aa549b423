import { describe, expect, it } from 'vitest';
import { keepLastManager, lastManager } from '@/lib/model';

describe('lastManager', () => {
  it('names the managedFields entry with the latest time', () => {
    const metadata = {
      managedFields: [
        { manager: 'helm', time: '2026-01-01T10:00:00Z' },
        { manager: 'kubectl-client-side-apply', time: '2026-01-01T12:00:00Z' },
        { manager: 'kube-controller-manager', time: '2026-01-01T11:00:00Z' },
      ],
    };
    expect(lastManager(metadata)).toBe('kubectl-client-side-apply');
    expect(keepLastManager(metadata)).toEqual([{ manager: 'kubectl-client-side-apply' }]);
  });

  it('takes the first named entry without times, and nothing from an object without managedFields', () => {
    expect(lastManager({ managedFields: [{ operation: 'Apply' }, { manager: 'helm' }, { manager: 'kubectl' }] })).toBe(
      'helm',
    );
    expect(lastManager({})).toBeUndefined();
    expect(lastManager({ managedFields: 'junk' })).toBeUndefined();
    expect(keepLastManager({})).toBeUndefined();
  });
});
