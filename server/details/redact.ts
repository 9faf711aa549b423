import { LAST_APPLIED } from '../../lib/kube';
import type { DeepReadonly, KubeObject } from '../../lib/model';

/** What a Secret's `data` or `stringData` becomes: each key with its value's size, never the value. */
export const HIDDEN = 'hidden';

/**
 * presentable is the object as the details panel shows it: without
 * metadata.managedFields, and for a Secret without `data` and `stringData`
 * values (each key keeps its size in bytes) and without the
 * last-applied-configuration annotation, where kubectl apply copies them.
 * The input is never changed.
 */
export function presentable(obj: DeepReadonly<KubeObject>): KubeObject {
  const { managedFields: _managed, ...metadata } = obj.metadata as KubeObject['metadata'];
  const out: KubeObject = { ...(obj as KubeObject), metadata };
  if (!isSecret(obj)) return out;
  if (metadata.annotations && LAST_APPLIED in metadata.annotations) {
    metadata.annotations = { ...metadata.annotations, [LAST_APPLIED]: HIDDEN };
  }
  for (const field of ['data', 'stringData'] as const) {
    const values = obj[field];
    if (values === undefined) continue;
    out[field] = sizes(values, field === 'data');
  }
  return out;
}

function isSecret(obj: DeepReadonly<KubeObject>): boolean {
  return obj.kind === 'Secret' && (obj.apiVersion === 'v1' || obj.apiVersion === '');
}

/** sizes maps each key to `hidden, N bytes`; base64 values are measured decoded, without decoding them. */
function sizes(values: unknown, base64: boolean): Record<string, string> | string {
  if (values === null || typeof values !== 'object') return HIDDEN;
  // fromEntries, not assignment: a key named __proto__ must stay a key.
  return Object.fromEntries(
    Object.entries(values as Record<string, unknown>).map(([key, v]) => {
      const n = typeof v !== 'string' ? 0 : base64 ? base64Bytes(v) : Buffer.byteLength(v, 'utf8');
      return [key, `${HIDDEN}, ${n} byte${n === 1 ? '' : 's'}`];
    }),
  );
}

function base64Bytes(v: string): number {
  const s = v.replace(/\s/g, '');
  const padding = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((s.length * 3) / 4) - padding);
}
