import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');

describe('docs/testing.md', () => {
  it('shows tests/unit/testing/doc-example.test.ts (which the unit suite runs) word for word', () => {
    const doc = readFileSync(path.join(root, 'docs/testing.md'), 'utf8');
    const block = /## A complete Vitest test[\s\S]*?```ts\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    expect(block).toBe(readFileSync(path.join(root, 'tests/unit/testing/doc-example.test.ts'), 'utf8'));
  });
});
