import { describe, expect, it } from 'vitest';
import { compactMetadata, keepLastManager, lastManager, trimManagedFields } from '@/lib/model';

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

describe('keepLastManager and compactMetadata', () => {
  it('shares one frozen entry among all objects of the same last manager', () => {
    const a = keepLastManager({ managedFields: [{ manager: 'helm' }] });
    const b = keepLastManager({
      managedFields: [
        { manager: 'kubectl', time: '2026-01-01T10:00:00Z' },
        { manager: 'helm', time: '2026-01-01T11:00:00Z' },
      ],
    });
    expect(a).toEqual([{ manager: 'helm' }]);
    expect(b).toBe(a);
    expect(Object.isFrozen(a) && Object.isFrozen(a![0])).toBe(true);
    expect(keepLastManager({ managedFields: [{ manager: 'kubectl' }] })).not.toBe(a);
  });

  it('copies every other field in its order, leaving out managedFields and the dropped fields', () => {
    const metadata = JSON.parse(
      '{"name":"a","namespace":"shop","managedFields":[{"manager":"helm","fieldsV1":{"f:spec":{}}}],"labels":{"x":"1"},"annotations":{"y":"2"},"resourceVersion":"7"}',
    ) as Record<string, unknown>;
    const out = compactMetadata(metadata);
    expect(Object.keys(out)).toEqual([
      'name',
      'namespace',
      'labels',
      'annotations',
      'resourceVersion',
      'managedFields',
    ]);
    expect(out.labels).toBe(metadata.labels);
    expect(out.managedFields).toEqual([{ manager: 'helm' }]);
    expect(metadata.managedFields).toHaveLength(1); // the input is left as it was
    expect(Object.keys(compactMetadata(metadata, (f) => f === 'annotations'))).not.toContain('annotations');
    expect(compactMetadata({ name: 'bare' })).toEqual({ name: 'bare' });
  });

  it('never lets a __proto__ field set the prototype of the copy', () => {
    const metadata = JSON.parse('{"name":"a","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const out = compactMetadata(metadata);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { polluted?: boolean }).polluted).toBeUndefined();
    expect(out).toEqual({ name: 'a' });
  });
});

describe('trimManagedFields', () => {
  it('trims managedFields in the object itself, and copies only to drop a field that names no manager', () => {
    const named = { name: 'a', managedFields: [{ manager: 'helm', fieldsV1: {} }], uid: 'u' };
    expect(trimManagedFields(named)).toBe(named);
    expect(Object.keys(named)).toEqual(['name', 'managedFields', 'uid']);
    expect(named.managedFields).toBe(keepLastManager({ managedFields: [{ manager: 'helm' }] }));
    const unnamed = { name: 'b', managedFields: [{ time: 't' }] };
    const copy = trimManagedFields(unnamed);
    expect(copy).not.toBe(unnamed);
    expect(copy).toEqual({ name: 'b' });
    const bare = { name: 'c' };
    expect(trimManagedFields(bare)).toBe(bare);
  });
});
