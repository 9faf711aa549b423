import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerCheck } from './commands/check';
import { registerExplain } from './commands/explain';
import { registerHistory } from './commands/history';
import { registerStuck } from './commands/stuck';
import { registerTree } from './commands/tree';
import { registerVersion } from './commands/version';
import { registerWatch } from './commands/watch';
import { CliError, EXIT } from './errors';

/**
 * refwatch on the command line, also installed as `kubectl-refwatch` so that
 * `kubectl refwatch …` finds it as a plugin. Exit codes: 0 everything asked
 * about is resolved, 1 something is unresolved or stuck, 2 a usage or
 * connection error.
 */
export function buildProgram(invokedAs: string): Command {
  const bin = invokedAs.startsWith('kubectl-') ? `kubectl ${invokedAs.slice('kubectl-'.length)}` : 'refwatch';
  const program = new Command(bin)
    .description(
      'Which Kubernetes reference is stuck, why, and what to do: explain, stuck, tree and watch, against a running refwatch server (--server URL) or standalone from your kubeconfig; check finds dangling references in manifests before they are applied.',
    )
    .usage('<command> [flags]')
    .exitOverride()
    .showSuggestionAfterError(true)
    .showHelpAfterError(`(run ${bin} <command> --help for every flag and examples)`)
    .configureHelp({ sortSubcommands: false });
  registerExplain(program, bin);
  registerStuck(program, bin);
  registerTree(program, bin);
  registerWatch(program, bin);
  registerCheck(program, bin);
  registerHistory(program, bin);
  registerVersion(program, bin);
  program.addHelpText(
    'after',
    `\nEXAMPLES\n  $ ${bin} explain pod/web -n shop\n  $ ${bin} stuck -A --older-than 1m\n  $ ${bin} tree App.demo.refwatch.dev/shop/web --server http://127.0.0.1:3000\n  $ ${bin} watch -n shop\n  $ ${bin} check -f deploy/ -R\n  $ ${bin} history pod/web -n shop --since 24h --server http://127.0.0.1:3000\n  $ ${bin} version --packs\n\nEXIT CODES\n  0  everything asked about is resolved\n  1  something is unresolved or stuck\n  2  usage or connection error\n`,
  );
  for (const c of program.commands)
    c.exitOverride().showHelpAfterError(`(run ${bin} ${c.name()} --help for every flag and examples)`);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  // The name it was run by (refwatch or kubectl-refwatch), from the bin link, or from a source checkout's shim.
  const program = buildProgram(
    process.env.REFWATCH_INVOKED_AS || path.basename(argv[1] ?? 'refwatch').replace(/\.[cm]?[jt]s$/, ''),
  );
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return EXIT.resolved;
    }
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.resolved;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.resolved : EXIT.usage;
    if (e instanceof CliError) {
      process.stderr.write(`error: ${e.message}\n`);
      return e.exitCode;
    }
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT.usage;
  }
}
