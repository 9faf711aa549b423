import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { END, RULES_DOC, START, perPack, relations, table, withTable } from '@/scripts/relations-table';

describe('the relations table in docs/rules.md', () => {
  const doc = readFileSync(RULES_DOC, 'utf8');

  it('is what the packs generate: run npm run relations:table when this fails', () => {
    expect(withTable(doc)).toBe(doc);
  });

  it('would catch a drift: a changed row makes the document differ', () => {
    const rows = relations();
    const drifted = table([...rows.slice(1)]);
    expect(withTable(doc, drifted)).not.toBe(doc);
  });

  it('lists at least 70 relations of the core and gateway packs and 45 of the ecosystem packs, each with a field, referent and readiness', () => {
    const rows = relations();
    expect(rows.filter((r) => r.pack === 'core' || r.pack === 'gateway').length).toBeGreaterThanOrEqual(70);
    expect(rows.filter((r) => !['core', 'gateway', 'crossplane'].includes(r.pack)).length).toBeGreaterThanOrEqual(45);
    for (const r of rows) {
      expect(r.field).not.toBe('');
      expect(r.referent).not.toBe('');
      expect(r.readiness).not.toBe('');
    }
    expect(rows).toContainEqual(
      expect.objectContaining({
        referrer: 'Deployment.apps',
        field: 'spec.template.spec.serviceAccountName',
        referent: 'ServiceAccount',
        by: 'name',
        readiness: 'exists',
      }),
    );
    expect(doc).toContain(`${rows.length} relations in the built-in packs: ${perPack(rows)}.`);
  });

  it('names the markers it needs when they are missing', () => {
    expect(() => withTable('# no table here')).toThrow(START);
    expect(() => withTable(`${START}`)).toThrow(END);
  });
});
