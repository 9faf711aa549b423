import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { LAST_APPLIED } from '@/lib/kube';
import type { KubeObject } from '@/lib/model';
import { presentable } from '@/server/details/redact';

const key = fc.stringMatching(/^[A-Za-z0-9._-]{1,20}$/);
/** Values long enough that finding one in the output can only mean it leaked. */
const value = fc.string({ minLength: 12, maxLength: 60, unit: 'grapheme' });

function secret(data: Record<string, string>, stringData: Record<string, string>, lastApplied: boolean): KubeObject {
  const obj: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'db-password',
      namespace: 'shop',
      managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:data': {} } }],
      labels: { app: 'shop' },
    },
    type: 'Opaque',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    stringData,
  };
  if (lastApplied)
    obj.metadata.annotations = {
      [LAST_APPLIED]: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', data: obj.data, stringData }),
      note: 'kept',
    };
  return obj;
}

describe('presentable', () => {
  it('never shows a value of a Secret’s data or stringData, in any form, in its YAML', () => {
    fc.assert(
      fc.property(
        fc.dictionary(key, value, { maxKeys: 6 }),
        fc.dictionary(key, value, { maxKeys: 6 }),
        fc.boolean(),
        (data, stringData, lastApplied) => {
          const obj = secret(data, stringData, lastApplied);
          const out = stringify(presentable(obj));
          const json = JSON.stringify(presentable(obj));
          for (const v of [...Object.values(data), ...Object.values(stringData)]) {
            for (const form of [v, Buffer.from(v).toString('base64'), JSON.stringify(v).slice(1, -1)]) {
              expect(out).not.toContain(form);
              expect(json).not.toContain(form);
            }
          }
          // The keys stay, each with its size.
          for (const [k, v] of Object.entries(data))
            expect(presentable(obj).data).toHaveProperty(
              [k],
              `hidden, ${Buffer.byteLength(v)} byte${Buffer.byteLength(v) === 1 ? '' : 's'}`,
            );
          for (const [k, v] of Object.entries(stringData))
            expect(presentable(obj).stringData).toHaveProperty(
              [k],
              `hidden, ${Buffer.byteLength(v)} byte${Buffer.byteLength(v) === 1 ? '' : 's'}`,
            );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('hides the last-applied annotation of a Secret and keeps its other metadata', () => {
    const p = presentable(secret({ password: 'correct horse battery' }, {}, true));
    expect(p.metadata.annotations).toEqual({ [LAST_APPLIED]: 'hidden', note: 'kept' });
    expect(p.metadata.labels).toEqual({ app: 'shop' });
    expect(p.type).toBe('Opaque');
  });

  it('drops managedFields of every object, keeps a ConfigMap’s data and its last-applied annotation, and leaves the input alone', () => {
    const cm: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'settings',
        namespace: 'shop',
        managedFields: [{ manager: 'kubectl' }],
        annotations: { [LAST_APPLIED]: '{"data":{"mode":"fast"}}' },
      },
      data: { mode: 'fast' },
    };
    const before = structuredClone(cm);
    const p = presentable(cm);
    expect(p.metadata).not.toHaveProperty('managedFields');
    expect(p.data).toEqual({ mode: 'fast' });
    expect(p.metadata.annotations).toEqual(cm.metadata.annotations);
    expect(cm).toEqual(before);
  });

  it('hides a Secret’s data that is not a map of strings whole', () => {
    const odd = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'x' },
      data: 'c2VjcmV0LXZhbHVl',
    } as unknown as KubeObject;
    expect(stringify(presentable(odd))).not.toContain('c2VjcmV0LXZhbHVl');
  });
});
