import { describe, expect, it } from 'vitest';
import { parseSelectorOnce } from '@/lib/engine/selector-cache';
import { deepFreeze, RefwatchError } from '@/lib/model';

describe('parseSelectorOnce', () => {
  it('parses a frozen selector once per options and shares the frozen answer', () => {
    const raw = deepFreeze({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] });
    const first = parseSelectorOnce(raw, { form: 'labelSelector', field: 'spec.selector' });
    expect(first?.text).toBe('app=web,tier');
    expect(parseSelectorOnce(raw, { form: 'labelSelector', field: 'spec.selector' })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first!.requirements[0]!.values)).toBe(true);
    // Other options are another reading of the same object.
    const other = parseSelectorOnce(raw, { form: 'labelSelector', field: 'spec.podSelector' });
    expect(other).not.toBe(first);
    expect(other?.text).toBe('app=web,tier');
  });

  it('keeps what empty means apart: a frozen {} is everything for one field and nothing for another', () => {
    const raw = deepFreeze({});
    expect(parseSelectorOnce(raw, { form: 'labelSelector', empty: 'all' })?.text).toBe('');
    expect(parseSelectorOnce(raw, { form: 'map', empty: 'none' })).toBeUndefined();
    expect(parseSelectorOnce(raw, { form: 'labelSelector', empty: 'all' })).toBeDefined();
  });

  it('reads a selector that is not deeply frozen anew, so a change to it is seen', () => {
    const labels: Record<string, string> = { app: 'web' };
    const raw = Object.freeze({ matchLabels: labels }); // frozen on top only
    expect(parseSelectorOnce(raw, { form: 'labelSelector' })?.text).toBe('app=web');
    labels.app = 'api';
    expect(parseSelectorOnce(raw, { form: 'labelSelector' })?.text).toBe('app=api');
  });

  it('throws the field-naming error on every call for a bad frozen selector', () => {
    const raw = deepFreeze({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'Near' }] });
    for (let i = 0; i < 2; i++) {
      let thrown: unknown;
      try {
        parseSelectorOnce(raw, { form: 'labelSelector', field: 'spec.selector' });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(RefwatchError);
      expect((thrown as RefwatchError).message).toContain('spec.selector.matchExpressions[0].operator');
    }
  });
});
