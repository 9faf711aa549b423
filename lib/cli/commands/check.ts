import { Option, type Command } from 'commander';
import { isRefwatchError } from '../../model';
import { loadRuleSet, type RulesDocument } from '../../rules';
import { runCheck, type CheckResult } from '../check';
import { readClusterRules } from '../cluster-rules';
import { CliError, EXIT } from '../errors';
import { readManifests } from '../manifests';
import { addCommonOptions, examples, type CommonOptions } from '../options';
import { createPrinter, renderData, type Printer } from '../output';

interface CheckOptions extends CommonOptions {
  filename: string[];
  recursive?: boolean;
  offline?: boolean;
}

export function registerCheck(program: Command, bin: string): void {
  const cmd = program
    .command('check')
    .summary('dangling references in manifests, before they are applied')
    .description(
      'Check the references of every object in -f against the live cluster (your kubeconfig), or against nothing with --offline.\n' +
        'An object of the set counts as present wherever it sits in the set, so apply order does not matter.\n' +
        'Exits 0 when every reference is satisfied, 1 when one dangles, 2 on a usage or connection error.',
    );
  addCommonOptions(cmd)
    .addOption(
      new Option('-f, --filename <path>', 'a manifest file, a directory of them, or - for stdin; repeatable')
        .argParser((v: string, prev: string[] = []) => [...prev, v])
        .makeOptionMandatory(),
    )
    .addOption(new Option('-R, --recursive', 'read the directories of -f recursively'))
    .addOption(new Option('--offline', 'check the set alone: every referent must be in it').conflicts(['server']))
    .addHelpText(
      'after',
      examples(
        [
          ['Will these manifests apply without a dangling reference?', 'check -f deploy/ -R'],
          ['Only the set itself, in CI without a cluster', 'check -f deploy/ -R --offline'],
          ['From a pipe, as JSON for a tool', 'kustomize build overlays/prod | ' + bin + ' check -f - -o json'],
        ],
        bin,
      ),
    );
  cmd.action(async (_opts: unknown, c: Command) => {
    const o = c.opts<CheckOptions>();
    if (o.server) throw new CliError('flag --server: check reads the cluster itself; drop --server, or use --offline');
    const manifests = await readManifests(o.filename, { recursive: o.recursive === true });
    if (manifests.length === 0)
      throw new CliError(`flag -f: no Kubernetes objects in ${o.filename.join(', ')}; give YAML or JSON manifests`);
    const rules = async (extra: readonly RulesDocument[] = []) => {
      try {
        return await loadRuleSet(o.packs, o.rules, extra);
      } catch (e) {
        throw new CliError(`flag --rules: ${isRefwatchError(e) || e instanceof Error ? e.message : String(e)}`);
      }
    };
    let result: CheckResult;
    if (o.offline) {
      // --offline asks no cluster, so it reads no ReferenceRules either: the packs and --rules files only.
      const ruleSet = await rules();
      result = await runCheck({ ruleSet, manifests, namespace: o.namespace ?? 'default', timeoutMs: o.timeout });
    } else {
      const { openKubeClient } = await import('../standalone');
      const { client, where } = openKubeClient(o);
      try {
        const fromCluster = await readClusterRules(client, o.timeout);
        const ruleSet = await rules(fromCluster.documents);
        const namespace = o.namespace ?? client.describe().namespace ?? 'default';
        result = await runCheck({ ruleSet, manifests, namespace, client, where, timeoutMs: o.timeout });
        result.referenceRules = { summary: fromCluster.summary, problems: fromCluster.problems };
      } finally {
        client.close();
      }
    }
    const printer = createPrinter({
      format: o.output,
      noHeaders: !o.headers,
      stream: process.stdout,
      env: process.env,
    });
    printCheck(printer, result, o.offline === true);
    process.exitCode = result.findings.some((f) => f.problem === 'missing') ? EXIT.unresolved : EXIT.resolved;
  });
}

/** printCheck writes one line per finding: where it was read, the object, and the finding with its fix. */
export function printCheck(p: Printer, r: CheckResult, offline: boolean): void {
  if (p.format === 'json' || p.format === 'yaml') return p.write(renderData(r, p.format));
  const c = p.colors;
  for (const f of r.findings) {
    const where = `${f.file}#${f.document}`;
    const tag = f.problem === 'missing' ? c.red('dangling') : c.yellow('not ready');
    p.write(`${where}: ${f.object}: ${tag}: ${f.message}; fix: ${f.fix}`);
  }
  for (const problem of r.referenceRules?.problems ?? []) process.stderr.write(`warning: ${problem}\n`);
  if (r.referenceRules) process.stderr.write(`note: ${r.referenceRules.summary}\n`);
  for (const kind of r.unjudged)
    process.stderr.write(`note: ${kind} is not served by the cluster (no CRD?); its references were not checked\n`);
  const missing = r.findings.filter((f) => f.problem === 'missing').length;
  const against = offline ? 'the set alone (--offline)' : 'the cluster';
  process.stderr.write(
    `${r.objects} object${r.objects === 1 ? '' : 's'} in ${r.files} file${r.files === 1 ? '' : 's'} checked against ${against}: ` +
      `${missing === 0 ? 'no dangling reference' : `${missing} dangling reference${missing === 1 ? '' : 's'}`}\n`,
  );
}
