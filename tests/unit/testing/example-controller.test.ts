import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');

describe('examples/controller', () => {
  it("tests against the demo's own CRDs: its crds.yaml is deploy/demo/crds.yaml", () => {
    expect(readFileSync(path.join(root, 'examples/controller/crds.yaml'), 'utf8')).toBe(
      readFileSync(path.join(root, 'deploy/demo/crds.yaml'), 'utf8'),
    );
  });

  it('runs its tests with plain node on refwatch/testing', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'examples/controller/package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.test).toMatch(/^node --test /);
    expect(readFileSync(path.join(root, 'examples/controller/src/controller.test.ts'), 'utf8')).toContain(
      "from 'refwatch/testing'",
    );
  });
});
