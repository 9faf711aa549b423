import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');

describe('README library quick start', () => {
  it('is examples/quickstart.ts, word for word', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const block = /<!-- quickstart -->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    expect(block).toBe(readFileSync(path.join(root, 'examples/quickstart.ts'), 'utf8'));
  });

  it('runs as written: the referrer goes from NotFound to Ready when the Secret appears', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'examples/quickstart.ts'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const lines = out.trim().split('\n');
    expect(lines).toContain('ConfigMap/shop/web: NotFound');
    expect(lines.at(-1)).toBe('ConfigMap/shop/web: Ready');
    expect(lines.indexOf('ConfigMap/shop/web: NotFound')).toBeLessThan(lines.lastIndexOf('ConfigMap/shop/web: Ready'));
  });
});
