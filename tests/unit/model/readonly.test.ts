import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { deepFreeze, deepFreezeLike } from '@/lib/model';

/** isDeepFrozen says whether value and everything it reaches is frozen. */
function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

/** parsed is a JSON value as the reflector gets it: parsed from its text, so each object is new and unfrozen. */
const parsed = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);

describe('deepFreezeLike', () => {
  it('freezes a parsed value whole and leaves it equal to itself, whatever it is compared with', () => {
    fc.assert(
      fc.property(parsed, parsed, (value, like) => {
        const expected = JSON.parse(JSON.stringify(value)) as unknown;
        const frozenLike = deepFreeze(like);
        const out = deepFreezeLike(value, frozenLike);
        expect(out).toBe(value);
        expect(out).toStrictEqual(expected);
        expect(isDeepFrozen(out)).toBe(true);
      }),
    );
  });

  it('leaves a new version equal to itself when it is compared with the version it replaces', () => {
    const previous = deepFreeze(
      JSON.parse(
        '{"apiVersion":"demo.refwatch.dev/v1alpha1","kind":"Database","metadata":{"name":"orders","namespace":"shop","uid":"8d1e"},"status":{"conditions":[{"type":"Ready","status":"False","reason":"Provisioning"}]}}',
      ),
    );
    const next = JSON.parse(
      '{"apiVersion":"demo.refwatch.dev/v1alpha1","kind":"Database","metadata":{"name":"orders","namespace":"shop","uid":"8d1e"},"status":{"conditions":[{"type":"Ready","status":"True","reason":"Provisioned"},{"type":"Extra"}]}}',
    );
    const expected = structuredClone(next);
    expect(deepFreezeLike(next, previous)).toStrictEqual(expected);
    expect(isDeepFrozen(next)).toBe(true);
  });

  it('never sets a prototype from a "__proto__" key, whatever the object it is compared with holds there', () => {
    const value = JSON.parse('{"__proto__":"x","a":{"__proto__":{"polluted":true}}}') as Record<string, unknown>;
    const like = deepFreeze(JSON.parse('{"__proto__":"x","a":{"__proto__":{"polluted":true}}}'));
    deepFreezeLike(value, like);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(value.a)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
  });
});
