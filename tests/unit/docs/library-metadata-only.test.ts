import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const doc = readFileSync(path.join(root, 'docs/library.md'), 'utf8');
const section = /\n## Metadata-only caches\n([\s\S]*?)(?=\n## |$)/.exec(doc)?.[1] ?? '';
const dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/library.md: Metadata-only caches', () => {
  it('has one TypeScript block and the output it prints', () => {
    expect(section.match(/```ts\n/g)).toHaveLength(1);
    expect(/It prints:\n\n```\n([\s\S]*?)```/.exec(section)?.[1]).toBeDefined();
  });

  it('runs as written against an embedded cluster and prints what the section says', async () => {
    const block = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
    const expected = /It prints:\n\n```\n([\s\S]*?)```/.exec(section)![1]!;
    // The block imports the library as a file in examples/ would; run it from a temporary ES module.
    const file = path.join(dir, 'metadata-only.mts');
    writeFileSync(file, block.replaceAll(/from '\.\.\/(lib|server)\//g, (_m, top: string) => `from '${path.join(root, top)}/`));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(stdout).toBe(expected);
  });
});
