import fc from 'fast-check';
import type { Labels, Requirement } from '@/lib/model';

/** labelsArbitrary makes label sets of up to four of the keys, each with one of the values. */
export function labelsArbitrary(keys: readonly string[], values: readonly string[]): fc.Arbitrary<Labels> {
  return fc.dictionary(fc.constantFrom(...keys), fc.constantFrom(...values), { maxKeys: 4 });
}

/** requirementArbitrary makes parsed requirements over the keys and values: In and NotIn list up to maxValues. */
export function requirementArbitrary(
  keys: readonly string[],
  values: readonly string[],
  maxValues: number,
): fc.Arbitrary<Requirement> {
  return fc.oneof(
    fc.record({
      key: fc.constantFrom(...keys),
      operator: fc.constantFrom('In' as const, 'NotIn' as const),
      values: fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength: maxValues }).map((v) => v.sort()),
    }),
    fc.record({
      key: fc.constantFrom(...keys),
      operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const),
      values: fc.constant([] as string[]),
    }),
  );
}
