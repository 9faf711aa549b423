import { conditionReadiness, defaultReadiness, type ReadinessPredicate } from '../../lib/engine';
import { KubeRequestError, sleep } from '../../lib/kube';
import { RefwatchError } from '../../lib/model';
import { demoManifests } from '../cluster';
import type { DemoClient } from './counted-client';
import { DEMO_GROUP, DEMO_VERSION } from './scenario';

const readyCondition = conditionReadiness('Ready');

/** demoReadiness judges the demo's kinds by their Ready condition and every other kind by the default. */
export function demoReadiness(kind: string): ReadinessPredicate {
  return kind.endsWith(`.${DEMO_GROUP}`) ? readyCondition : defaultReadiness;
}

const PLURAL = { App: 'apps', Database: 'databases', Cache: 'caches' } as const;
export type DemoKind = keyof typeof PLURAL;

/** demoResource names a demo kind's resource as kube-apiserver's metrics do, e.g. apps.demo.refwatch.dev. */
export function demoResource(kind: DemoKind): string {
  return `${PLURAL[kind]}.${DEMO_GROUP}`;
}

/** demoPath is the URL of a demo object, or of its collection when name is omitted. */
export function demoPath(kind: DemoKind, namespace: string, name?: string, subresource?: 'status'): string {
  const base = `/apis/${DEMO_GROUP}/${DEMO_VERSION}/namespaces/${namespace}/${PLURAL[kind]}`;
  return name === undefined ? base : `${base}/${name}${subresource ? `/${subresource}` : ''}`;
}

export function secretPath(namespace: string, name?: string): string {
  const base = `/api/v1/namespaces/${namespace}/secrets`;
  return name === undefined ? base : `${base}/${name}`;
}

async function servedKinds(client: DemoClient, signal?: AbortSignal): Promise<Set<string>> {
  try {
    const list = await client.getJSON<{ resources?: { name: string }[] }>(
      `/apis/${DEMO_GROUP}/${DEMO_VERSION}`,
      {},
      signal,
    );
    return new Set((list.resources ?? []).map((r) => r.name));
  } catch (e) {
    if (e instanceof KubeRequestError && e.status === 404) return new Set();
    throw e;
  }
}

const missing = (served: Set<string>) => Object.values(PLURAL).filter((p) => !served.has(p));

/**
 * ensureDemoKinds checks that the cluster serves App, Database and Cache. With
 * install it creates the CRDs of deploy/demo/crds.yaml that are missing and
 * waits until they are served; without, a missing kind is an error that says
 * how to install them.
 */
export async function ensureDemoKinds(
  client: DemoClient,
  opts: { install: boolean; signal?: AbortSignal; timeoutMs?: number },
): Promise<void> {
  let absent = missing(await servedKinds(client, opts.signal));
  if (absent.length === 0) return;
  if (!opts.install) {
    throw new RefwatchError(
      'DemoKindsMissing',
      `the cluster does not serve ${absent.map((p) => `${p}.${DEMO_GROUP}`).join(', ')}: install the demo's CRDs with kubectl apply -f deploy/demo/crds.yaml`,
      {
        field: 'cluster',
      },
    );
  }
  for (const crd of demoManifests() as { metadata?: { name?: string } }[]) {
    const plural = crd.metadata?.name?.split('.')[0] ?? '';
    if (!absent.includes(plural as (typeof absent)[number])) continue;
    try {
      await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        body: crd,
        signal: opts.signal,
      });
    } catch (e) {
      if (!(e instanceof KubeRequestError && e.status === 409)) throw e;
    }
  }
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    absent = missing(await servedKinds(client, opts.signal));
    if (absent.length === 0) return;
    if (Date.now() > deadline)
      throw new RefwatchError(
        'DemoKindsMissing',
        `the demo's CRDs were created but ${absent.join(', ')} are still not served after ${opts.timeoutMs ?? 60_000} ms`,
      );
    await sleep(200, opts.signal);
  }
}
