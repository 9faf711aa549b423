import type { Manager } from '../lib/engine';
import { appReferences, DEMO_API_VERSION, DEMO_GROUP, ReadinessSimulator, type DemoClient } from './demo';

/** The prefix of the example's App controllers on the manager and the dashboard. */
export const EXAMPLE_CONTROLLER = 'example/App';

interface Manifest {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
  spec?: { readyAfterMs?: unknown };
}

export interface ExampleOptions {
  manager: Manager;
  /** Writes the referents' status when they turn Ready. */
  client: DemoClient;
  /** The example's manifests (deploy/example), already applied to the cluster. */
  manifests: readonly object[];
  /** Overrides every Database's and Cache's spec.readyAfterMs (tests use a short one). */
  readyAfterMs?: number;
  /** Told when a referent could not be marked Ready. */
  onError?(what: string, error: unknown): void;
}

/** Example is the running example: its App controllers and its readiness timers. */
export interface Example {
  /** The manager's controllers for the example's Apps, one per namespace. */
  controllers: string[];
  /** stop cancels the readiness timers, awaits their patches and removes the controllers. */
  stop(): Promise<void>;
}

const isDemo = (m: Manifest, kind: string) => m.apiVersion === DEMO_API_VERSION && m.kind === kind;
const namespaceOf = (m: Manifest) =>
  typeof m.metadata?.namespace === 'string' && m.metadata.namespace !== '' ? m.metadata.namespace : 'default';

/**
 * startExample brings the example to life on a cluster where its manifests
 * are applied: an App controller per namespace holding Apps (the way the
 * demo's watch controller declares an App's references, but writing nothing),
 * and, playing the referents' own controller, a timer per Database and Cache
 * that marks it Ready spec.readyAfterMs after now.
 */
export function startExample(o: ExampleOptions): Example {
  const manifests = o.manifests as Manifest[];
  const abort = new AbortController();
  const simulators: ReadinessSimulator[] = [];
  const byNamespace = new Map<string, ReadinessSimulator>();
  for (const m of manifests) {
    const kind = isDemo(m, 'Database') ? 'Database' : isDemo(m, 'Cache') ? 'Cache' : undefined;
    const name = m.metadata?.name;
    const readyAfter = o.readyAfterMs ?? m.spec?.readyAfterMs;
    if (!kind || typeof name !== 'string' || typeof readyAfter !== 'number') continue;
    const namespace = namespaceOf(m);
    let sim = byNamespace.get(namespace);
    if (!sim) {
      sim = new ReadinessSimulator({
        client: o.client,
        namespace,
        signal: abort.signal,
        onReady: () => {},
        onError: (k, n, e) => o.onError?.(`${k} ${namespace}/${n}`, e),
      });
      byNamespace.set(namespace, sim);
      simulators.push(sim);
    }
    sim.schedule(kind, name, readyAfter);
  }

  const controllers: string[] = [];
  for (const namespace of new Set(manifests.filter((m) => isDemo(m, 'App')).map(namespaceOf))) {
    const name = `${EXAMPLE_CONTROLLER}/${namespace}`;
    o.manager.addController({
      name,
      for: { group: DEMO_GROUP, kind: 'App', namespace },
      workers: 1,
      reconcile(ctx) {
        if (!ctx.object) return;
        for (const ref of appReferences(ctx.object)) ctx.resolve({ referent: ref.key, fieldPath: ref.fieldPath });
      },
    });
    controllers.push(name);
  }

  let stopped: Promise<void> | undefined;
  return {
    controllers,
    stop() {
      stopped ??= (async () => {
        abort.abort();
        await Promise.all(simulators.map((s) => s.stop()));
        await Promise.all(controllers.map((c) => o.manager.removeController(c)));
      })();
      return stopped;
    },
  };
}
