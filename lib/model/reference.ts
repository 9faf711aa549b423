import { RefwatchError, err, ok, type Result } from './errors';
import { isPlainKey, parseKey, type ObjectKey } from './keys';

/**
 * Reference is one declared dependency of a referrer: the referent's key and
 * the field path that named it (`spec.databaseRef`). A referrer may name the
 * same referent from two fields; each is its own Reference.
 */
export interface Reference {
  referent: ObjectKey;
  fieldPath: string;
}

const FIELD_PATH = /^[A-Za-z_$][\w$-]*(\[\d+\]|\[[^\]]+\]|\.[A-Za-z_$][\w$-]*)*$/;

/**
 * isPlainReference is validateReference's fast path (see isPlainKey): a reference it accepts,
 * validateReference accepts too; one it refuses is for validateReference to judge and explain.
 */
export function isPlainReference(ref: Reference): boolean {
  return (
    ref !== null &&
    typeof ref === 'object' &&
    isPlainKey(ref.referent) &&
    typeof ref.fieldPath === 'string' &&
    FIELD_PATH.test(ref.fieldPath)
  );
}

export function validateReference(ref: Reference, field = 'reference'): Result<Reference> {
  if (ref === null || typeof ref !== 'object') {
    return err(
      new RefwatchError('InvalidReference', `${field} must be an object {referent, fieldPath}`, {
        field,
        example: '{"referent":"Secret/shop/db-password","fieldPath":"spec.secretRef"}',
      }),
    );
  }
  const k = parseKey(ref.referent, `${field}.referent`);
  if (!k.ok) return k;
  if (typeof ref.fieldPath !== 'string' || !FIELD_PATH.test(ref.fieldPath)) {
    return err(
      new RefwatchError(
        'InvalidFieldPath',
        `${field}.fieldPath "${String(ref.fieldPath)}" is not a field path like spec.databaseRef or spec.volumes[0].secret`,
        {
          field: `${field}.fieldPath`,
          example: 'spec.databaseRef',
        },
      ),
    );
  }
  return ok(ref);
}

export function referenceId(ref: Reference): string {
  return `${ref.referent}#${ref.fieldPath}`;
}
