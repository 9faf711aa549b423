import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driveShop, seedShop, startExampleCluster } from '../../setup/example-cluster';

const root = path.resolve(import.meta.dirname, '../../..');
const doc = readFileSync(path.join(root, 'docs/library.md'), 'utf8');
// Blocks run from here, with `refwatch/*` mapped to lib's sources (what the package ships, compiled).
const dir = path.join(root, 'test-results', 'library-docs');

interface Block {
  code: string;
  /** The ```text block that follows: what the program prints. */
  output: string | undefined;
}

/** blocks lists docs/library.md's ```ts blocks in order, each with the ```text block right after it, if any. */
function blocks(): Block[] {
  const out: Block[] = [];
  for (const m of doc.matchAll(/```(\w*)\n([\s\S]*?)```/g)) {
    if (m[1] === 'ts') out.push({ code: m[2]!, output: undefined });
    else if (m[1] === 'text' && out.length > 0 && out.at(-1)!.output === undefined) out.at(-1)!.output = m[2]!;
    else
      throw new Error(
        `docs/library.md: a \`\`\`${m[1]} block no test runs; use \`\`\`ts (a program) or \`\`\`text (its output)`,
      );
  }
  return out;
}

/** How each block runs, in order: a controller runs until `until` is printed, then gets SIGTERM. */
const runs: { name: string; until?: string }[] = [
  { name: 'the example controller', until: 'App shop/web resolved' },
  { name: 'readiness predicates' },
  { name: 'status conditions' },
  { name: 'metrics' },
  { name: 'metadata-only caches' },
  { name: 'leader election' },
  { name: 'read-only caches' },
  { name: 'namespaces' },
  { name: 'observers' },
  { name: 'waking only when it may resolve' },
];

beforeAll(() => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023'],
        types: ['node'],
        module: 'ES2022',
        moduleResolution: 'bundler',
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        noEmit: true,
        paths: { 'refwatch/*': ['../../lib/*/index.ts'] },
      },
      include: ['*.ts'],
    }),
  );
  blocks().forEach((b, i) => writeFileSync(path.join(dir, `block-${i + 1}.ts`), b.code));
  // The package's own README (what npm shows) is type-checked with them.
  [...readFileSync(path.join(root, 'lib/README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].forEach((m, i) =>
    writeFileSync(path.join(dir, `package-readme-${i + 1}.ts`), m[1]!),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/library.md', () => {
  it('has one run for each code block, and each block but the first prints what follows it', () => {
    const all = blocks();
    expect(all.map((_, i) => runs[i]?.name)).toEqual(runs.map((r) => r.name));
    for (const b of all) expect(b.output).toBeDefined();
  });

  it('shows examples/controller/src/controller.ts word for word', () => {
    expect(blocks()[0]!.code).toBe(readFileSync(path.join(root, 'examples/controller/src/controller.ts'), 'utf8'));
  });

  it('type-checks every block, and those of lib/README.md, against the library', async () => {
    const { code, output } = await runNode(
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')],
      {},
      undefined,
      // A whole program's type check: about 20 s on an idle 2-core machine, minutes on a loaded one.
      200_000,
    );
    expect(output, output).toBe('');
    expect(code).toBe(0);
  }, 240_000);

  runs.forEach((run, i) => {
    it(`runs block ${i + 1} (${run.name}) on the embedded cluster and prints what the doc says`, async () => {
      const cluster = await startExampleCluster('embedded');
      const stop = new AbortController();
      try {
        await seedShop(cluster.client);
        const driving = driveShop(cluster.client, stop.signal).catch(() => undefined);
        // REFWATCH_LOG_LEVEL=warn: the library's info lines on stderr (leadership, say) carry times; the doc shows what the program prints.
        const { code, output } = await runNode(
          ['--import', 'tsx', path.join(dir, `block-${i + 1}.ts`)],
          {
            KUBECONFIG: cluster.kubeconfigPath,
            TSX_TSCONFIG_PATH: path.join(dir, 'tsconfig.json'),
            REFWATCH_LOG_LEVEL: 'warn',
          },
          run.until,
        );
        stop.abort();
        await driving;
        expect(output).toBe(blocks()[i]!.output);
        expect(code).toBe(0);
      } finally {
        stop.abort();
        await cluster.stop();
      }
    }, 60_000);
  });
});

/** runNode runs node with args; once `until` is printed it sends one SIGTERM, as Kubernetes does. Output is stdout then stderr. */
function runNode(
  args: string[],
  env: Record<string, string>,
  until?: string,
  limitMs = 50_000,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (until !== undefined && !signalled && stdout.split('\n').includes(until)) signalled = child.kill('SIGTERM');
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: stdout + stderr });
    });
  });
}
