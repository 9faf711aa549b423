// node --import tsx scripts/failed-tests.ts DIR
// Prints the tests that failed in the Vitest and Playwright JSON reports in DIR (scripts/test-all.sh writes them
// there), one line each: the tier, the file, the test and the first line of its error. npm test prints this at its
// very end, so the last lines of a long run name what failed, however much the later tiers printed after it.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

export interface FailedTest {
  tier: string;
  file: string;
  test: string;
  error: string;
}

interface VitestReport {
  testResults?: {
    name: string;
    status?: string;
    message?: string;
    assertionResults?: { status: string; fullName?: string; title: string; failureMessages?: string[] }[];
  }[];
}

interface PlaywrightSuite {
  title: string;
  file?: string;
  specs?: {
    title: string;
    file?: string;
    tests?: { status?: string; results?: { error?: { message?: string } }[] }[];
  }[];
  suites?: PlaywrightSuite[];
}

interface PlaywrightReport {
  suites: PlaywrightSuite[];
  errors?: { message?: string }[];
}

const firstLine = (s: string | undefined): string =>
  stripVTControlCharacters(s ?? '')
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim()
    .slice(0, 300) ?? '';

/** vitestFailures lists a Vitest JSON report's failed tests, and files that failed outside any test (a hook, an import). */
export function vitestFailures(tier: string, report: VitestReport, root: string): FailedTest[] {
  const out: FailedTest[] = [];
  for (const file of report.testResults ?? []) {
    const rel = path.relative(root, file.name);
    const failed = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of failed)
      out.push({ tier, file: rel, test: a.fullName ?? a.title, error: firstLine(a.failureMessages?.[0]) });
    if (file.status === 'failed' && failed.length === 0)
      out.push({ tier, file: rel, test: '(the file, outside any test)', error: firstLine(file.message) });
  }
  return out;
}

/** playwrightFailures lists a Playwright JSON report's tests that failed on every try (flaky ones passed in the end). */
export function playwrightFailures(tier: string, report: PlaywrightReport): FailedTest[] {
  const out = suiteFailures(tier, report.suites);
  // Errors outside any test: a global setup, a web server that never came up.
  for (const e of report.errors ?? [])
    out.push({ tier, file: '', test: '(outside any test)', error: firstLine(e.message) });
  return out;
}

/** suiteFailures walks the suites: the top level's are the files, below them the describe blocks, whose titles it keeps. */
function suiteFailures(tier: string, suites: PlaywrightSuite[], titles?: string[]): FailedTest[] {
  const out: FailedTest[] = [];
  for (const suite of suites) {
    const within = titles ? [...titles, suite.title] : [];
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests ?? [])
        if (t.status === 'unexpected')
          out.push({
            tier,
            file: spec.file ?? suite.file ?? '',
            test: [...within, spec.title].join(' > '),
            error: firstLine(t.results?.at(-1)?.error?.message),
          });
    out.push(...suiteFailures(tier, suite.suites ?? [], within));
  }
  return out;
}

/**
 * readFailures reads every `<tier>.json` report in dir; a report it cannot read is named, not passed over. A tier
 * that wrote no report lists nothing here: test-all.sh's `some tiers failed` line names it.
 */
export function readFailures(dir: string, root: string): { failures: FailedTest[]; unreadable: string[] } {
  const failures: FailedTest[] = [];
  const unreadable: string[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const tier = name.slice(0, -'.json'.length);
    try {
      const report = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as VitestReport | PlaywrightReport;
      failures.push(...('suites' in report ? playwrightFailures(tier, report) : vitestFailures(tier, report, root)));
    } catch (e) {
      unreadable.push(`${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { failures, unreadable };
}

/** formatFailure is the line a failure gets: `tier: file > test: error`. */
export function formatFailure(f: FailedTest): string {
  return `${f.tier}: ${[f.file, f.test].filter(Boolean).join(' > ')}${f.error ? `: ${f.error}` : ''}`;
}

function main(): void {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: failed-tests.ts DIR (a folder of Vitest and Playwright JSON reports)');
    process.exit(2);
  }
  const { failures, unreadable } = readFailures(dir, path.resolve(import.meta.dirname, '..'));
  for (const f of failures) console.log(`  ${formatFailure(f)}`);
  for (const u of unreadable) console.log(`  (a report could not be read: ${u})`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main();
