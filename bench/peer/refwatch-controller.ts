import { conditionReadiness, Manager, type ControllerOptions, type Resolution } from '../../lib/engine';
import { KubeClient, KubeRequestError, SharedInformerPool } from '../../lib/kube';
import { formatTime, type KubeObject, type Reference } from '../../lib/model';
import { appReferences, DEMO_GROUP } from '../../server/demo/scenario';
import { controllerArgs } from './controller-args';
import { DeferredLog, LagProbe } from './lag-probe';

/*
 * refwatch's side of the peer benchmark, as its own process like the Go
 * binary: the demo's App controller on refwatch's engine. Each reconcile
 * declares the App's three references through ctx.resolve(), reads the
 * referents from the shared caches, and returns while one is not Ready; the
 * engine queues the App again when a referent changes. Once all are Ready it
 * writes status.resolvedAt, as the Go modes do.
 *
 *   node --import tsx bench/peer/refwatch-controller.ts --namespace NS --kubeconfig FILE [--workers 8]
 *   (the benchmark compiles it first and runs it with plain node: see peer-run.ts)
 *
 * Prints "ready" once the App watch is primed; stops on SIGTERM or SIGINT. With REFWATCH_PEER_DEBUG it also
 * notes each change of its watches and each resolution later than 100 ms, split by LagProbe, and prints them when
 * it stops or fails.
 */

const APP_PATH = `/apis/${DEMO_GROUP}/v1alpha1/namespaces`;
const readyCondition = conditionReadiness('Ready');
// REFWATCH_PEER_DEBUG's lines are written when the process stops, not as they happen (see DeferredLog).
const debugLog = process.env.REFWATCH_PEER_DEBUG ? new DeferredLog() : undefined;
const probe = debugLog ? new LagProbe(debugLog.line) : undefined;

function appController(client: KubeClient, namespace: string, workers: number): ControllerOptions {
  return {
    name: 'app',
    for: { group: DEMO_GROUP, kind: 'App', namespace },
    workers,
    async reconcile(ctx) {
      const app = ctx.object;
      if (!app) return;
      const refs = referencesOf(app);
      let ready = refs.length === 3;
      const resolutions: Resolution[] = [];
      for (const ref of refs) {
        const r = ctx.resolve(ref);
        resolutions.push(r);
        if (r.state !== 'Ready') ready = false;
      }
      if (!ready || resolvedAtOf(app)) return;
      const now = Date.now();
      probe?.resolving(resolutions, now);
      const resolvedAt = formatTime(now);
      const write = () =>
        // The resourceVersion makes a stale cached App fail with 409 instead of writing twice.
        client.request('PATCH', `${APP_PATH}/${namespace}/apps/${app.metadata.name}/status`, {
          body: { metadata: { resourceVersion: app.metadata.resourceVersion }, status: { resolvedAt } },
          contentType: 'application/merge-patch+json',
          signal: ctx.signal,
        });
      try {
        await (probe ? probe.write(write) : write());
      } catch (e) {
        // The newer App is on its way to the cache and queues the App again.
        if (e instanceof KubeRequestError && e.status === 409) return;
        throw e;
      }
    },
  };
}

/*
 * An App's references, worked out once per cached version of it: a cached object is frozen and shared, so
 * what is derived from it holds as long as it does. Of an App's seven reconciles, five read the version
 * the one before read (each woken by a referent), and their references are then the same strings,
 * hashed once for every lookup that follows.
 */
const referencesByApp = new WeakMap<KubeObject, readonly Reference[]>();

function referencesOf(app: KubeObject): readonly Reference[] {
  let refs = referencesByApp.get(app);
  if (refs === undefined) {
    refs = appReferences(app).map((ref) => ({ referent: ref.key, fieldPath: ref.fieldPath }));
    referencesByApp.set(app, refs);
  }
  return refs;
}

function resolvedAtOf(app: KubeObject): string | undefined {
  return (app.status as { resolvedAt?: string } | undefined)?.resolvedAt;
}

async function main(): Promise<void> {
  const args = controllerArgs();

  const heapProfDir = process.env.REFWATCH_PEER_HEAP_PROF;
  const stopProfile = heapProfDir
    ? await (await import('./memory-profile')).startMemoryProfile(heapProfDir)
    : async () => undefined;
  const client = KubeClient.fromFile(args.kubeconfig);
  const manager = new Manager({
    source: new SharedInformerPool({ client, ...(probe ? { reflector: { transform: probe.transform } } : {}) }),
    readiness: (kind) => (kind.endsWith(`.${DEMO_GROUP}`) ? readyCondition : undefined),
  });
  manager.addController(appController(client, args.namespace, args.workers));
  manager.start();

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= manager
      .stop()
      .then(stopProfile)
      .then(() => {
        debugLog?.flush();
        process.exit(0);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  while (!manager.source.watches().some((w) => w.target.kind === 'App' && w.primed))
    await new Promise((r) => setTimeout(r, 20));
  console.log('ready');
  if (debugLog) {
    const seen = new Map<string, string>();
    const print = (): boolean => {
      let settled = true;
      for (const w of manager.source.watches()) {
        const line = `${w.target.kind} ${w.phase} opened ${w.watchesOpened} lists ${w.lists} ${w.lastError ? `${w.lastError.reason}: ${w.lastError.message}` : ''}`;
        if (seen.get(w.target.kind) !== line) debugLog.line(`${Date.now() % 100000} ${line}`);
        seen.set(w.target.kind, line);
        settled &&= w.phase === 'Watching' && w.primed;
      }
      return settled;
    };
    // Every 5 ms while the watches start, then every second. A 5 ms timer kept through the run changed what the
    // run measured: in the two runs made with one, refwatch's median p99 at 1,000 Apps was 45 and 47 ms,
    // against 70-98 ms in four runs without. Why is not known; a probe must not move the figure it explains.
    const starting = setInterval(() => {
      // Four watches: the Apps', then their referents' (Database, Cache, Secret), opened by the first reconcile.
      if (!print() || manager.source.watches().length < 4) return;
      clearInterval(starting);
      setInterval(print, 1000).unref();
    }, 5).unref();
  }
}

main().catch((e: unknown) => {
  debugLog?.flush();
  console.error(`refwatch-controller: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
