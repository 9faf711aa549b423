import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Option, type Command } from 'commander';
import { PACK_NAMES, packStatesOf, type PackName } from '../../rules';
import { CliError, EXIT } from '../errors';
import { duration, examples } from '../options';
import { renderData } from '../output';

interface VersionOptions {
  packs?: boolean;
  server?: string;
  token?: string;
  kubeconfig?: string;
  context?: string;
  timeout: number;
  output: 'text' | 'json' | 'yaml';
}

/** What `version` prints: refwatch's version and, with --packs, a line per rule pack saying whether it is on and why. */
export interface VersionReport {
  version: string;
  packs?: { source: string; lines: string[] };
}

export function registerVersion(program: Command, bin: string): void {
  const cmd = program
    .command('version')
    .summary("refwatch's version; with --packs, which rule packs are on and why")
    .description(
      "Print refwatch's version. With --packs, say which reference rule packs are on and why, one line per pack, as the Cluster panel and /api/v1/snapshot do (cert-manager: on, cert-manager.io/v1 served):\n" +
        '  with --server, the packs that server runs;\n' +
        "  otherwise, what --packs auto turns on in the kubeconfig's cluster: core always, every other pack while the cluster serves its API group.",
    )
    .option('--packs', 'also say which rule packs are on and why')
    .addOption(new Option('--server <url>', 'ask a running refwatch server (API v1)').env('REFWATCH_SERVER'))
    .addOption(new Option('--token <token>', 'bearer token for --server').env('REFWATCH_TOKEN'))
    .addOption(
      new Option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)').conflicts(
        'server',
      ),
    )
    .addOption(new Option('--context <name>', 'kubeconfig context to use').conflicts('server'))
    .addOption(
      new Option('--timeout <duration>', 'give up when no answer came within this long')
        .argParser(duration('--timeout'))
        .default(30_000, '30s'),
    )
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'yaml']).default('text'))
    .addHelpText(
      'after',
      examples(
        [
          ['Which packs would --packs auto turn on in this cluster?', 'version --packs'],
          ['Which packs does a server run, and why?', 'version --packs --server http://127.0.0.1:3000'],
        ],
        bin,
      ),
    );
  cmd.action(async () => {
    const o = cmd.opts<VersionOptions>();
    const report: VersionReport = { version: refwatchVersion() };
    if (o.packs) report.packs = o.server ? await serverPacks(o) : await clusterPacks(o);
    process.stdout.write(`${formatVersion(report, o.output)}\n`);
    process.exitCode = EXIT.resolved;
  });
}

/** formatVersion renders the report: `refwatch 0.1.0`, then the packs' lines under where they come from. */
export function formatVersion(report: VersionReport, format: VersionOptions['output']): string {
  if (format === 'json' || format === 'yaml') return renderData(report, format).replace(/\n$/, '');
  const lines = [`refwatch ${report.version}`];
  if (report.packs) lines.push(`packs (${report.packs.source}):`, ...report.packs.lines.map((l) => `  ${l}`));
  return lines.join('\n');
}

/** autoPackLines says what `--packs auto` turns on, given discovery's group list (GET /apis). */
export function autoPackLines(groups: unknown): string[] {
  const served = new Map<string, string>();
  const list = (groups as { groups?: unknown })?.groups;
  if (Array.isArray(list))
    for (const g of list) {
      const name = (g as { name?: unknown })?.name;
      const gv = (g as { preferredVersion?: { groupVersion?: unknown } })?.preferredVersion?.groupVersion;
      if (typeof name === 'string' && typeof gv === 'string') served.set(name, gv);
    }
  const others = PACK_NAMES.filter((p): p is Exclude<PackName, 'core'> => p !== 'core');
  return ['core: on, always', ...packStatesOf(others, served).map((s) => s.why)];
}

async function clusterPacks(o: VersionOptions): Promise<VersionReport['packs']> {
  // Loaded on demand, as for the other commands: a plain `version` never pays for the Kubernetes client.
  const { openKubeClient } = await import('../standalone');
  const { client, where } = openKubeClient({ kubeconfig: o.kubeconfig, context: o.context });
  try {
    const groups = await client.request('GET', '/apis', { signal: AbortSignal.timeout(o.timeout) });
    return { source: `--packs auto in ${where}`, lines: autoPackLines(groups) };
  } catch (e) {
    throw new CliError(`cannot list the API groups of ${where}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function serverPacks(o: VersionOptions): Promise<VersionReport['packs']> {
  const url = new URL('/api/v1/snapshot', o.server);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(o.timeout) });
  } catch (e) {
    throw new CliError(`cannot reach --server ${url.origin}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (res.status === 401 || res.status === 403)
    throw new CliError(`--server ${url.origin} refused the request (${res.status}); pass its token with --token`);
  if (!res.ok)
    throw new CliError(`--server ${url.origin} answered ${res.status} ${res.statusText} for ${url.pathname}`);
  const body = (await res.json().catch(() => undefined)) as { cluster?: { packs?: unknown } } | undefined;
  const packs = body?.cluster?.packs;
  if (!Array.isArray(packs) || packs.some((p) => typeof p !== 'string'))
    throw new CliError(`--server ${url.origin} says nothing of its packs (cluster.packs): is it a refwatch server?`);
  return { source: `--server ${url.origin}`, lines: packs as string[] };
}

/** refwatchVersion reads the version of the refwatch package this file belongs to, from source or from dist/. */
export function refwatchVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'refwatch' && pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}
