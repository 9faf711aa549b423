import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');

describe('docs/library.md, Leader election', () => {
  it('its code block runs as written: the standby takes over when the leader stops', () => {
    const doc = readFileSync(path.join(root, 'docs/library.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Leader election'));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBeDefined();
    // Beside the doc, so that its imports resolve as they read.
    const file = path.join(root, 'docs', `.leader-election-${process.pid}.ts`);
    writeFileSync(file, block!);
    let out: string;
    try {
      out = execFileSync(process.execPath, ['--import', 'tsx', file], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    } finally {
      rmSync(file, { force: true });
    }
    expect(out.trim().split('\n')).toEqual([
      'replica-a: leading',
      'replica-a: reconciled ConfigMap/shop/web',
      '{"identity":"replica-b","isLeader":false,"holder":"replica-a"}',
      'replica-a: stopped leading (stopped)',
      'replica-b: leading',
      'replica-b: reconciled ConfigMap/shop/web',
      'replica-b: stopped leading (stopped)',
    ]);
  });
});
