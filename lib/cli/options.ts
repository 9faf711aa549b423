import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseDuration } from '../diagnose';
import { kindKey, type ObjectKey } from '../model';
import { PACK_NAMES, type PackName } from '../rules';
import type { Backend } from './backend';
import { CliError, EXIT } from './errors';
import { keyOfTyped, parseObjectArg } from './object-arg';
import { OUTPUT_FORMATS, createPrinter, type OutputFormat, type Printer } from './output';

/** CommonOptions are the flags every subcommand takes: where to ask, and how to print. */
export interface CommonOptions {
  server?: string;
  token?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces?: boolean;
  packs: PackName[];
  rules: string[];
  output: OutputFormat;
  headers: boolean;
  timeout: number;
}

/** duration is a commander parser for durations (30s, 5m, 1h30m); the error says what to type. */
export function duration(flag: string) {
  return (text: string): number => {
    const d = parseDuration(text, flag);
    if (!d.ok) throw new InvalidArgumentError(`${d.error.message.replace(`${flag} `, '')}; for example ${flag} 30s`);
    return d.value;
  };
}

function packs(text: string): PackName[] {
  if (text === 'none') return [];
  const names = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const n of names)
    if (!(PACK_NAMES as readonly string[]).includes(n))
      throw new InvalidArgumentError(
        `unknown pack "${n}"; choose from ${PACK_NAMES.join(', ')}, comma-separated, or none`,
      );
  return names as PackName[];
}

function files(text: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...text
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean),
  ];
}

const STANDALONE = ['kubeconfig', 'context', 'packs', 'rules'];

/** addCommonOptions declares the shared flags on a subcommand, so its help lists every flag it takes. */
export function addCommonOptions(cmd: Command, opts: { allNamespaces?: boolean } = {}): Command {
  cmd
    .addOption(
      new Option(
        '-n, --namespace <ns>',
        'namespace of TYPE/NAME objects and of the question (default: the kubeconfig context\'s, else "default")',
      ),
    )
    .addOption(new Option('-o, --output <format>', 'output format').choices(OUTPUT_FORMATS).default('table'))
    .addOption(new Option('--no-headers', 'print tables without their header row'))
    .addOption(
      new Option('--server <url>', 'ask a running refwatch server (API v1) instead of watching the cluster yourself')
        .env('REFWATCH_SERVER')
        .conflicts(STANDALONE),
    )
    .addOption(new Option('--token <token>', 'bearer token for --server').env('REFWATCH_TOKEN'))
    .addOption(new Option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)'))
    .addOption(new Option('--context <name>', 'kubeconfig context to use (default: its current-context)'))
    .addOption(
      new Option('--packs <list>', `built-in reference rule packs, comma-separated: ${PACK_NAMES.join(', ')}, or none`)
        .argParser(packs)
        .default(['core'], 'core'),
    )
    .addOption(
      new Option('--rules <files>', 'reference rules files (YAML or JSON, docs/rules.md), comma-separated or repeated')
        .argParser(files)
        .default([], 'none'),
    )
    .addOption(
      new Option('--timeout <duration>', 'give up when no answer came within this long')
        .argParser(duration('--timeout'))
        .default(30_000, '30s'),
    );
  if (opts.allNamespaces) cmd.addOption(new Option('-A, --all-namespaces', 'every namespace').conflicts('namespace'));
  return cmd;
}

/** examples formats a gh-style EXAMPLES section for a subcommand's help. */
export function examples(lines: [string, string][], bin: string): string {
  return `\nEXAMPLES\n${lines.map(([what, cmd]) => `  # ${what}\n  $ ${bin} ${cmd}\n`).join('\n')}`;
}

/** openBackend picks the server or a headless engine from the flags. */
export async function openBackend(o: CommonOptions): Promise<Backend> {
  // Loaded on demand: --help and server mode never pay for the Kubernetes client.
  if (o.server)
    return new (await import('./server-backend')).ServerBackend({
      url: o.server,
      token: o.token,
      namespace: o.namespace,
      timeoutMs: o.timeout,
    });
  return (await import('./standalone')).StandaloneBackend.open({
    kubeconfig: o.kubeconfig,
    context: o.context,
    namespace: o.namespace,
    packs: o.packs,
    rules: o.rules,
    timeoutMs: o.timeout,
  });
}

/** resolveObject turns OBJECT [NAME] into a key, resolving TYPE through the backend's kinds. */
export async function resolveObject(backend: Backend, object: string, name: string | undefined): Promise<ObjectKey> {
  const arg = parseObjectArg(object, name);
  if (arg.form === 'key') return arg.key;
  return keyOfTyped(await backend.kinds.resolve(arg.type), arg.name, backend.namespace);
}

/** resolveKind turns --kind (pod, pods, Pod, App.demo.refwatch.dev) into a kind key. */
export async function resolveKind(backend: Backend, text: string): Promise<string> {
  try {
    return kindKey(await backend.kinds.resolve(text));
  } catch (e) {
    if (e instanceof CliError) throw new CliError(e.message.replace('argument OBJECT', 'flag --kind'), EXIT.usage);
    throw e;
  }
}

/**
 * act runs a subcommand: opens the backend, runs it, closes the backend
 * (every watch and request) and sets the exit code. Errors print one line.
 */
export function act<A extends unknown[]>(
  fn: (backend: Backend, printer: Printer, o: CommonOptions, ...args: A) => Promise<number>,
) {
  return async (...args: [...A, CommonOptions, Command]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const o = cmd.opts<CommonOptions>();
    // REFWATCH_TOKEN may be set for a server this shell also runs; only a typed --token without --server is a mistake.
    if (o.token && !o.server && cmd.getOptionValueSource('token') === 'cli')
      throw new CliError('flag --token is only for --server: add --server URL, or drop --token to use the kubeconfig');
    const printer = createPrinter({
      format: o.output,
      noHeaders: !o.headers,
      stream: process.stdout,
      env: process.env,
    });
    const backend = await openBackend(o);
    try {
      process.exitCode = await fn(backend, printer, o, ...(args.slice(0, -2) as A));
    } finally {
      await backend.close();
    }
  };
}
