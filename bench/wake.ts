import { randomBytes } from 'node:crypto';
import { Manager, type WakeOn } from '../lib/engine';
import { KubeClient, SharedInformerPool } from '../lib/kube';
import { demoManifests } from '../server/cluster';
import { DemoRunner, demoReadiness, summaryTable, type DemoRunView } from '../server/demo';
import { startEmbeddedServer } from '../lib/embedded';
import { report, result } from './report';

// wake: the demo workload (the resolution benchmark's: 1,000 Apps whose Databases and Caches turn
// Ready 1–20 s after creation) once per wakeOn of the watch controller, each run beside the backoff
// controller (client-go preset) on the same cluster. engine.reconcilesPerApp is the watch
// controller's reconciles per App; the target, for the demo's own wakeOn ('resolution'), is to
// reconcile no more than backoff in the same run. Every run's watch controller has forWakeOn
// 'generation', as the demo's has: status writes to an App do not queue it.

const APPS = Number(process.env.REFWATCH_BENCH_APPS ?? 1_000);
const TIMEOUT_MS = Number(process.env.REFWATCH_BENCH_TIMEOUT_MS ?? 120_000);
const WAKE_ONS: WakeOn[] = ['change', 'readiness', 'generation', 'resolution'];

async function run(
  client: KubeClient,
  wakeOn: WakeOn,
  serverRequestCount: () => Record<string, number>,
): Promise<DemoRunView> {
  const manager = new Manager({
    source: new SharedInformerPool({ client }),
    readiness: demoReadiness,
    grace: 5_000,
    statsIntervalMs: 0,
  });
  manager.start();
  const runner = new DemoRunner({ manager, client, installCrds: true, serverRequestCount, wakeOn });
  try {
    const r = runner.start({
      apps: APPS,
      readyAfter: { distribution: 'uniform', minMs: 1_000, maxMs: 20_000 },
      backoffPreset: 'client-go',
      timeoutMs: TIMEOUT_MS,
      seed: 42,
    });
    await r.finished;
    const view = r.view();
    if (view.error) throw new Error(`the run failed: ${view.error}`);
    await runner.delete(r.id);
    return view;
  } finally {
    await runner.dispose();
    await manager.stop();
  }
}

console.log(
  `== wake on the embedded cluster: ${APPS} Apps, ready after 1–20 s, one run per wakeOn (${WAKE_ONS.join(', ')})`,
);
const embedded = await startEmbeddedServer({
  objects: demoManifests(),
  bookmarkIntervalMs: 30_000,
  token: randomBytes(24).toString('hex'),
});
const views = new Map<WakeOn, DemoRunView>();
try {
  const client = KubeClient.fromKubeconfig(embedded.kubeconfig(), { source: 'embedded' });
  for (const wakeOn of WAKE_ONS) {
    console.log(`-- wakeOn: '${wakeOn}'`);
    const view = await run(client, wakeOn, () => embedded.requestCount());
    console.log(summaryTable(view));
    views.set(wakeOn, view);
  }
} finally {
  await embedded.stop();
}

for (const [wakeOn, view] of views) {
  const w = view.results.modes.watch;
  const b = view.results.modes.backoff;
  const latency = w.censoredLatencyMs ?? w.latencyMs;
  if (wakeOn === 'resolution')
    result(`engine.reconcilesPerApp.${wakeOn}`, w.reconciles.perApp, 'reconciles', '<=', b.reconciles.perApp);
  else report(`engine.reconcilesPerApp.${wakeOn}`, w.reconciles.perApp, 'reconciles');
  report(`engine.reconcilesPerApp.backoff.${wakeOn}Run`, b.reconciles.perApp, 'reconciles');
  report(`engine.wake.p50.${wakeOn}`, latency?.p50 ?? NaN, 'ms');
  report(`engine.wake.p99.${wakeOn}`, latency?.p99 ?? NaN, 'ms');
  if (w.unresolved > 0) console.log(`wakeOn '${wakeOn}' left ${w.unresolved} Apps unresolved`);
}
