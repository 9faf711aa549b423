import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatFailure, readFailures } from '@/scripts/failed-tests';

// Real reports from the real runners, on a fixture of one passing and one failing test each: the summary
// npm test prints at its end must read what Vitest and Playwright write, in the versions the lock file pins.
const ROOT = path.resolve(import.meta.dirname, '../../..');
let dir: string;
let reports: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-failed-tests-'));
  reports = path.join(dir, 'reports');
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  writeFileSync(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['v/*.test.mjs'] } };\n");
  writeFileSync(
    path.join(dir, 'playwright.config.mjs'),
    "export default { testDir: 'p', reporter: [['json', { outputFile: process.env.OUT }]] };\n",
  );
  for (const d of ['v', 'p', 'reports']) mkdirSync(path.join(dir, d));
  writeFileSync(
    path.join(dir, 'v', 'sum.test.mjs'),
    [
      "import { describe, expect, it } from 'vitest';",
      "describe('sum', () => {",
      "  it('adds', () => expect(1 + 1).toBe(2));",
      "  it('carries', () => expect(9 + 1).toBe(11));",
      '});',
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(dir, 'v', 'broken.test.mjs'), "throw new Error('cannot load the fixture');\n");
  writeFileSync(
    path.join(dir, 'p', 'page.spec.mjs'),
    [
      "import { expect, test } from '@playwright/test';",
      "test.describe('page', () => {",
      "  test('opens', () => expect(true).toBe(true));",
      "  test('closes', () => expect('open').toBe('closed'));",
      '});',
      '',
    ].join('\n'),
  );
  const vitest = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/vitest/vitest.mjs'),
      'run',
      '--root',
      dir,
      '--config',
      path.join(dir, 'vitest.config.mjs'),
      '--reporter=json',
      `--outputFile=${path.join(reports, 'unit.json')}`,
    ],
    { cwd: dir, encoding: 'utf8', env: { ...process.env, CI: 'true' } },
  );
  expect(vitest.status, vitest.stderr).toBe(1);
  const playwright = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/@playwright/test/cli.js'),
      'test',
      '--config',
      path.join(dir, 'playwright.config.mjs'),
    ],
    { cwd: dir, encoding: 'utf8', env: { ...process.env, OUT: path.join(reports, 'e2e.json') } },
  );
  expect(playwright.status, playwright.stderr).toBe(1);
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('scripts/failed-tests.ts, the failures npm test lists at its end', () => {
  it('names each failed test with its tier, file and first error line, and no passing one', () => {
    const lines = readFailures(reports, dir).failures.map(formatFailure);
    expect(lines).toHaveLength(3);
    expect(lines).toContainEqual(expect.stringMatching(/^e2e: page\.spec\.mjs > page > closes: Error: .*toBe/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^unit: v\/sum\.test\.mjs > sum carries: AssertionError: expected 10 to be 11/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^unit: v\/broken\.test\.mjs > \(the file, outside any test\): .*cannot load the fixture/),
    );
    expect(lines.join('\n')).not.toMatch(/adds|opens/);
  });

  it('names a report it cannot read instead of passing over it', () => {
    const bad = mkdtempSync(path.join(os.tmpdir(), 'refwatch-failed-tests-bad-'));
    try {
      writeFileSync(path.join(bad, 'integration-real.json'), '{"testResults": [');
      const { failures, unreadable } = readFailures(bad, dir);
      expect(failures).toEqual([]);
      expect(unreadable).toEqual([expect.stringMatching(/^integration-real\.json: .*JSON/)]);
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });
});
