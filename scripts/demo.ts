import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { Manager } from '../lib/engine';
import { KubeClient, SharedInformerPool } from '../lib/kube';
import { RefwatchError } from '../lib/model';
import { demoManifests } from '../server/cluster';
import {
  DemoRunner,
  demoReadiness,
  parseDelay,
  parseDemoConfig,
  parseReadyAfter,
  summaryTable,
  type DemoConfigInput,
  type DemoRun,
  type DemoRunView,
} from '../server/demo';
import { startEmbeddedServer, type EmbeddedServer } from '../lib/embedded';

const USAGE = `npm run demo -- [flags]

Runs the fast-vs-backoff demo headless: the same Apps reconciled by refwatch's
watch controller and by a classic backoff controller, side by side.

  --apps N                 Apps to create, 1..5000 (default 100)
  --ready-after MIN..MAX   readiness delay of each Database and Cache, uniform (default 1s..20s); or one duration, fixed
  --databases N, --caches N, --secrets N
                           referents of each kind, 1..5000 (default: one per App)
  --backoff PRESET         client-go (default) or crossplane
  --dangling FRACTION      share of Apps whose databaseRef points nowhere, split evenly into typo, wrong namespace, kind not installed (default 0)
  --churn-after DURATION   drop every App's cacheRef this long after the objects exist
  --timeout DURATION       end the run after this long, at most 10m (default 120s)
  --seed N                 replay a scenario
  --cluster embedded|kubeconfig
                           the embedded API server (default), or the cluster of a kubeconfig
  --kubeconfig PATH        kubeconfig file (implies --cluster kubeconfig)
  --context NAME           context in the kubeconfig (implies --cluster kubeconfig)
  --json FILE, --csv FILE  export the run (JSON: the run and every App; CSV: one line per App)
  -h, --help               this text`;

/** Config fields as the flags that set them, for error messages. */
const FLAG_OF: Record<string, string> = {
  apps: '--apps',
  databases: '--databases',
  caches: '--caches',
  secrets: '--secrets',
  readyAfter: '--ready-after',
  dangling: '--dangling',
  churn: '--churn-after',
  backoffPreset: '--backoff',
  timeoutMs: '--timeout',
  seed: '--seed',
};

class UsageError extends Error {}

function count(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} "${text}" must be a whole number`);
  return Number(text);
}

function parseFlags(argv: string[]): {
  config: DemoConfigInput;
  cluster: { kind: 'embedded' } | { kind: 'kubeconfig'; path: string; context?: string };
  json?: string;
  csv?: string;
} {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        apps: { type: 'string' },
        'ready-after': { type: 'string' },
        databases: { type: 'string' },
        caches: { type: 'string' },
        secrets: { type: 'string' },
        backoff: { type: 'string' },
        dangling: { type: 'string' },
        'churn-after': { type: 'string' },
        timeout: { type: 'string' },
        seed: { type: 'string' },
        cluster: { type: 'string' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        json: { type: 'string' },
        csv: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const config: DemoConfigInput = {};
  const apps = count('--apps', values.apps);
  if (apps !== undefined) config.apps = apps;
  for (const k of ['databases', 'caches', 'secrets'] as const) {
    const n = count(`--${k}`, values[k]);
    if (n !== undefined) config[k] = n;
  }
  if (values['ready-after'] !== undefined) config.readyAfter = parseReadyAfter(values['ready-after']);
  if (values.backoff !== undefined) {
    if (values.backoff !== 'client-go' && values.backoff !== 'crossplane')
      throw new UsageError(`--backoff "${values.backoff}" must be client-go or crossplane`);
    config.backoffPreset = values.backoff;
  }
  if (values.dangling !== undefined) {
    const f = Number(values.dangling);
    if (values.dangling.trim() === '' || !Number.isFinite(f) || f < 0 || f > 1)
      throw new UsageError(`--dangling "${values.dangling}" must be a fraction from 0 to 1, e.g. 0.05`);
    config.dangling = { typo: f / 3, wrongNamespace: f / 3, kindNotInstalled: f / 3 };
  }
  if (values['churn-after'] !== undefined)
    config.churn = { dropKind: 'Cache', afterMs: parseDelay(values['churn-after'], '--churn-after') };
  if (values.timeout !== undefined) config.timeoutMs = parseDelay(values.timeout, '--timeout');
  const seed = count('--seed', values.seed);
  if (seed !== undefined) config.seed = seed;

  const mode = values.cluster ?? (values.kubeconfig || values.context ? 'kubeconfig' : 'embedded');
  if (mode !== 'embedded' && mode !== 'kubeconfig')
    throw new UsageError(`--cluster "${mode}" must be embedded or kubeconfig`);
  if (mode === 'embedded' && (values.kubeconfig || values.context))
    throw new UsageError('--kubeconfig and --context need --cluster kubeconfig');
  let cluster: { kind: 'embedded' } | { kind: 'kubeconfig'; path: string; context?: string } = { kind: 'embedded' };
  if (mode === 'kubeconfig') {
    const path =
      values.kubeconfig ??
      process.env.KUBECONFIG?.split(':')[0] ??
      (process.env.HOME ? `${process.env.HOME}/.kube/config` : undefined);
    if (!path) throw new UsageError('--cluster kubeconfig needs --kubeconfig PATH (or KUBECONFIG)');
    cluster = { kind: 'kubeconfig', path, ...(values.context ? { context: values.context } : {}) };
  }
  // Validate now, so a bad value is reported by its flag before any cluster starts.
  try {
    parseDemoConfig(config);
  } catch (e) {
    if (e instanceof RefwatchError && e.field) {
      const flag = FLAG_OF[e.field.split('.')[0]!];
      throw new UsageError(flag ? `${flag}: ${e.message.slice(e.message.indexOf(':') + 2)}` : e.message);
    }
    throw e;
  }
  return { config, cluster, ...(values.json ? { json: values.json } : {}), ...(values.csv ? { csv: values.csv } : {}) };
}

function progressLine(v: DemoRunView): string {
  const p = v.progress;
  return `${(p.elapsedMs / 1000).toFixed(1)}s ${v.phase.toLowerCase()}: objects ${p.objects.created}/${p.objects.planned}, referents ready ${p.referents.ready}/${p.referents.total}, resolved watch ${p.resolved.watch}/${p.apps.resolvable}, backoff ${p.resolved.backoff}/${p.apps.resolvable}`;
}

async function showProgress(run: DemoRun): Promise<void> {
  const tty = process.stderr.isTTY === true;
  if (!tty) {
    const timer = setInterval(() => console.error(progressLine(run.view())), 2_000);
    await run.finished;
    clearInterval(timer);
    console.error(progressLine(run.view()));
    return;
  }
  const bars = new cliProgress.MultiBar(
    {
      format: '{mode} [{bar}] {value}/{total} {note}',
      hideCursor: true,
      clearOnComplete: false,
      stream: process.stderr,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  const v0 = run.view();
  const objects = bars.create(v0.progress.objects.planned, 0, { mode: 'objects ', note: '' });
  const watch = bars.create(Math.max(1, v0.progress.apps.resolvable), 0, { mode: 'watch   ', note: '' });
  const backoff = bars.create(Math.max(1, v0.progress.apps.resolvable), 0, { mode: 'backoff ', note: '' });
  const update = () => {
    const v = run.view();
    objects.update(v.progress.objects.created, {
      note: `referents ready ${v.progress.referents.ready}/${v.progress.referents.total}, ${(v.progress.elapsedMs / 1000).toFixed(1)} s`,
    });
    watch.update(v.progress.resolved.watch, { note: '' });
    backoff.update(v.progress.resolved.backoff, { note: '' });
  };
  const timer = setInterval(update, 200);
  await run.finished;
  clearInterval(timer);
  update();
  bars.stop();
}

async function main(): Promise<number> {
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError || e instanceof RefwatchError) {
      console.error(`demo: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    throw e;
  }
  let embedded: EmbeddedServer | undefined;
  let client: KubeClient;
  if (flags.cluster.kind === 'embedded') {
    // Even on loopback the API server takes no anonymous requests.
    embedded = await startEmbeddedServer({
      objects: demoManifests(),
      bookmarkIntervalMs: 30_000,
      token: randomBytes(24).toString('hex'),
    });
    client = KubeClient.fromKubeconfig(embedded.kubeconfig(), { source: 'embedded' });
  } else {
    client = KubeClient.fromFile(flags.cluster.path, flags.cluster.context ? { context: flags.cluster.context } : {});
  }
  const d = client.describe();
  console.error(`demo: cluster ${embedded ? 'embedded' : `${d.context} (${d.server})`}`);
  const manager = new Manager({
    source: new SharedInformerPool({ client }),
    readiness: demoReadiness,
    grace: 5_000,
    statsIntervalMs: 0,
  });
  manager.start();
  const runner = new DemoRunner({
    manager,
    client,
    installCrds: true,
    serverRequestCount: embedded ? () => embedded.requestCount() : undefined,
  });

  let run: DemoRun | undefined;
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    console.error('\ndemo: interrupted; stopping the run and deleting its objects');
    if (run) void run.halt('Stopped');
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let code = 0;
  try {
    run = runner.start(flags.config);
    const c = run.config;
    console.error(
      `demo: run ${run.id} in namespace ${run.namespace}: ${c.apps} Apps, ${c.databases} Databases, ${c.caches} Caches, ${c.secrets} Secrets, ready after ${c.readyAfter.distribution === 'fixed' ? `${c.readyAfter.ms} ms` : `${c.readyAfter.minMs}..${c.readyAfter.maxMs} ms`}, backoff ${c.backoffPreset}, timeout ${c.timeoutMs / 1000} s, seed ${run.seed}`,
    );
    await showProgress(run);
    const view = run.view({ latencies: true });
    if (view.error) console.error(`demo: ${view.error}`);
    console.log(summaryTable(view));
    if (flags.json) writeFileSync(flags.json, run.exportJson());
    if (flags.csv) writeFileSync(flags.csv, run.exportCsv());
    if (view.phase === 'Failed') code = 1;
    if (interrupted) code = 130;
  } finally {
    if (run)
      await runner
        .delete(run.id)
        .catch((e: unknown) =>
          console.error(`demo: cleaning up run ${run!.id} failed: ${e instanceof Error ? e.message : String(e)}`),
        );
    await manager.stop();
    await embedded?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return code;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`demo: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
