import { describe, expect, it } from 'vitest';
import { compileRuleSet, parseRulesText, readinessOf, type RuleSet } from '@/lib/rules';
import type { KubeObject } from '@/lib/model';

function ruleSet(text: string): RuleSet {
  const r = parseRulesText(text, 'test.yaml');
  if (!r.ok) throw r.error;
  return compileRuleSet([r.value]);
}

const rs = ruleSet(`
kinds:
  - { kind: Secret, ready: exists }
  - { group: apps, kind: Deployment, ready: { condition: Available } }
  - { group: batch, kind: Job, ready: { condition: Failed, status: 'False' } }
  - { kind: PersistentVolumeClaim, ready: { field: status.phase, equals: Bound } }
  - { kind: Namespace, ready: { field: status.phase, equals: [Active, Bound] } }
  - { group: '*', kind: ProviderConfig, ready: exists }
`);

function obj(apiVersion: string, kind: string, status?: unknown): KubeObject {
  return { apiVersion, kind, metadata: { name: 'x', namespace: 'shop' }, status };
}
const cond = (type: string, status: string, reason?: string, message?: string) => ({ type, status, reason, message });

describe('readinessOf', () => {
  it('by default: Ready=True, or no conditions at all', () => {
    expect(readinessOf(rs, obj('demo.refwatch.dev/v1alpha1', 'Database'))).toEqual({ ready: true });
    expect(readinessOf(rs, obj('demo.refwatch.dev/v1alpha1', 'Database', { conditions: [] }))).toEqual({ ready: true });
    expect(
      readinessOf(rs, obj('demo.refwatch.dev/v1alpha1', 'Database', { conditions: [cond('Ready', 'True')] })),
    ).toEqual({ ready: true });
  });

  it("by default, NotReady carries the Ready condition's reason and message", () => {
    const db = obj('demo.refwatch.dev/v1alpha1', 'Database', {
      conditions: [cond('Ready', 'False', 'Provisioning', 'creating the volume')],
    });
    expect(readinessOf(rs, db)).toEqual({
      ready: false,
      condition: 'Ready',
      reason: 'Provisioning',
      message: 'creating the volume',
    });
  });

  it('by default, conditions without a Ready one are not ready', () => {
    const r = readinessOf(rs, obj('demo.refwatch.dev/v1alpha1', 'Database', { conditions: [cond('Synced', 'True')] }));
    expect(r).toMatchObject({ ready: false, condition: 'Ready', reason: 'ConditionMissing' });
  });

  it('exists: any object found is ready, whatever its conditions', () => {
    expect(readinessOf(rs, obj('v1', 'Secret', { conditions: [cond('Ready', 'False')] }))).toEqual({ ready: true });
  });

  it('a named condition decides, and its absence is reported', () => {
    const dep = (c?: unknown[]) => obj('apps/v1', 'Deployment', c && { conditions: c });
    expect(readinessOf(rs, dep([cond('Available', 'True'), cond('Ready', 'False')]))).toEqual({ ready: true });
    expect(
      readinessOf(
        rs,
        dep([
          cond('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'),
        ]),
      ),
    ).toEqual({
      ready: false,
      condition: 'Available',
      reason: 'MinimumReplicasUnavailable',
      message: 'Deployment does not have minimum availability.',
    });
    expect(readinessOf(rs, dep())).toMatchObject({
      ready: false,
      condition: 'Available',
      reason: 'ConditionMissing',
      message: 'no Available condition yet',
    });
  });

  it('describes a failing condition that has no reason or message itself', () => {
    expect(
      readinessOf(rs, obj('apps/v1', 'Deployment', { conditions: [{ type: 'Available', status: 'Unknown' }] })),
    ).toEqual({
      ready: false,
      condition: 'Available',
      reason: 'AvailableUnknown',
      message: 'condition Available is Unknown; ready when True',
    });
  });

  it('a condition may be required to have another status', () => {
    expect(readinessOf(rs, obj('batch/v1', 'Job', { conditions: [cond('Failed', 'False')] }))).toEqual({ ready: true });
    expect(
      readinessOf(
        rs,
        obj('batch/v1', 'Job', {
          conditions: [cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')],
        }),
      ),
    ).toMatchObject({
      ready: false,
      reason: 'BackoffLimitExceeded',
    });
  });

  it('a field predicate compares the value, with one or several accepted values', () => {
    expect(readinessOf(rs, obj('v1', 'PersistentVolumeClaim', { phase: 'Bound' }))).toEqual({ ready: true });
    expect(readinessOf(rs, obj('v1', 'PersistentVolumeClaim', { phase: 'Pending' }))).toEqual({
      ready: false,
      reason: 'FieldMismatch',
      field: 'status.phase',
      message: 'status.phase is "Pending"; ready when it is "Bound"',
    });
    expect(readinessOf(rs, obj('v1', 'PersistentVolumeClaim'))).toMatchObject({
      ready: false,
      message: 'status.phase is not set; ready when it is "Bound"',
    });
    expect(readinessOf(rs, obj('v1', 'Namespace', { phase: 'Active' }))).toEqual({ ready: true });
  });

  it('a kind entry for any group applies to that kind in every group', () => {
    expect(
      readinessOf(rs, obj('aws.upbound.io/v1beta1', 'ProviderConfig', { conditions: [cond('Ready', 'False')] })),
    ).toEqual({ ready: true });
  });

  it('tolerates malformed conditions', () => {
    expect(readinessOf(rs, obj('demo.refwatch.dev/v1alpha1', 'Database', { conditions: 'broken' }))).toEqual({
      ready: true,
    });
    expect(
      readinessOf(rs, obj('demo.refwatch.dev/v1alpha1', 'Database', { conditions: [null, 3, { status: 'True' }] })),
    ).toEqual({ ready: true });
  });
});
