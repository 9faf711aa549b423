import { describe, expect, it } from 'vitest';
import { parseExplanation } from '@/components/data/explain';

const ref = {
  referent: 'Database.demo.refwatch.dev/shop/ordrs',
  fieldPath: 'spec.databaseRef',
  state: 'NotFound',
  reason: 'NotFound',
  message: 'not found',
  fix: 'Fix the typo',
  suggestions: ['Database.demo.refwatch.dev/shop/orders'],
};

describe('parseExplanation', () => {
  it('reads the per-controller answer and merges its references', () => {
    const e = parseExplanation(
      {
        object: 'App.demo.refwatch.dev/shop/catalog',
        controllers: [
          { controller: 'app-watch', state: 'NotFound', since: 1, references: [ref] },
          { controller: 'app-backoff', state: 'NotFound', since: 1, references: [ref] },
        ],
      },
      'x',
    );
    expect(e.controller).toBe('app-watch');
    expect(e.state).toBe('NotFound');
    expect(e.references).toHaveLength(1);
    expect(e.references[0]!.suggestions).toEqual(['Database.demo.refwatch.dev/shop/orders']);
  });

  it('reads the flat answer too', () => {
    const e = parseExplanation({ object: 'k', controller: 'c', state: 'Waiting', references: [ref] }, 'k');
    expect(e.references[0]!.fix).toBe('Fix the typo');
  });

  it('survives missing and mistyped fields instead of throwing', () => {
    const e = parseExplanation(
      { references: [null, 7, { referent: 3, suggestions: 'no' }] },
      'App.demo.refwatch.dev/shop/x',
    );
    expect(e.object).toBe('App.demo.refwatch.dev/shop/x');
    expect(e.references).toEqual([
      { referent: '', fieldPath: '', state: '', reason: '', message: '', fix: '', suggestions: [] },
    ]);
    expect(parseExplanation(null, 'k').references).toEqual([]);
  });
});
