import { afterEach, describe, expect, it, vi } from 'vitest';
import { explain, stuck } from '@/lib/diagnose';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import { parseNamespaceSelector, type KubeObject } from '@/lib/model';
import { builtinRuleSet, extractSelectors, observeRuleSet } from '@/lib/rules';

const MON = 'monitoring.coreos.com';

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

const service = (name: string, namespace: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace, labels },
  spec: { ports: [{ name: 'metrics', port: 9090 }] },
});

const serviceMonitor = (spec: Record<string, unknown>, namespace = 'shop'): KubeObject => ({
  apiVersion: `${MON}/v1`,
  kind: 'ServiceMonitor',
  metadata: { name: 'web', namespace },
  spec: { endpoints: [{ port: 'metrics' }], ...spec },
});

const namespace = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});

/** The rules observer over the core and prometheus packs, on a memory cluster holding objects. */
function observe(objects: KubeObject[]) {
  const source = new MemoryInformerSource({ priming: 'sync' });
  const observer = observeRuleSet(builtinRuleSet(['core', 'prometheus'], []));
  manager = new Manager({ source, statsIntervalMs: 0, readiness: (kind) => observer.readiness(kind) });
  observer.attach(manager);
  manager.start();
  for (const o of objects) source.apply(o);
  const m = manager;
  return { source, referrer: (controller: string, key: string) => m.changelog.get('referrer', `${controller}|${key}`) };
}

const SM = `rules/ServiceMonitor.${MON}`;
const SM_KEY = `ServiceMonitor.${MON}/shop/web`;

describe('prometheus pack: selector relations', () => {
  it('a ServiceMonitor selecting no Service is NoMatch with the nearest labels, and resolves once a Service is labelled', async () => {
    const { source, referrer } = observe([
      service('web', 'shop', { app: 'web' }),
      serviceMonitor({ selector: { matchLabels: { app: 'web-metrics' } } }),
    ]);
    await vi.waitFor(() =>
      expect(referrer(SM, SM_KEY)).toMatchObject({
        state: 'NoMatch',
        message: '0 Services in shop match app=web-metrics; 1 Service has app=web: did you mean app=web?',
      }),
    );
    const r = explain(manager!, SM_KEY);
    if (!r.ok) throw r.error;
    expect(r.value.controllers[0]?.selections).toEqual([
      expect.objectContaining({ fieldPath: 'spec.selector', kind: 'Service', selector: 'app=web-metrics', matched: 0 }),
    ]);
    expect(stuck(manager!, { olderThan: 0 }).find((e) => e.key === SM_KEY)).toMatchObject({
      reason: 'NoMatch',
      message: '0 Services in shop match app=web-metrics; 1 Service has app=web: did you mean app=web?',
      fix: 'set spec.selector to app=web, or label a Service in shop with app=web-metrics',
    });
    source.apply(service('web', 'shop', { app: 'web-metrics' }));
    await vi.waitFor(() => expect(referrer(SM, SM_KEY)?.state).toBe('Resolved'));
  });

  it('a ServiceMonitor looks in its own namespace unless namespaceSelector says any or matchNames', async () => {
    const { source, referrer } = observe([
      service('web', 'other', { app: 'web' }),
      serviceMonitor({ selector: { matchLabels: { app: 'web' } }, namespaceSelector: {} }),
    ]);
    await vi.waitFor(() => expect(referrer(SM, SM_KEY)?.state).toBe('NoMatch'));
    source.apply(serviceMonitor({ selector: { matchLabels: { app: 'web' } }, namespaceSelector: { matchNames: [] } }));
    await vi.waitFor(() => expect(referrer(SM, SM_KEY)?.message).toMatch(/^0 Services in shop match app=web/));
    source.apply(
      serviceMonitor({ selector: { matchLabels: { app: 'web' } }, namespaceSelector: { matchNames: ['other'] } }),
    );
    await vi.waitFor(() => expect(referrer(SM, SM_KEY)?.state).toBe('Resolved'));
    source.apply(serviceMonitor({ selector: { matchLabels: { app: 'web' } }, namespaceSelector: { any: true } }));
    await vi.waitFor(() => expect(referrer(SM, SM_KEY)?.state).toBe('Resolved'));
    expect(manager!.registry.referencesOf(SM, SM_KEY).map((ref) => ref.referent)).toEqual(['Service/other/web']);
  });

  it('a PodMonitor selects Pods', async () => {
    const { source, referrer } = observe([
      {
        apiVersion: `${MON}/v1`,
        kind: 'PodMonitor',
        metadata: { name: 'worker', namespace: 'shop' },
        spec: { selector: { matchLabels: { app: 'worker' } }, podMetricsEndpoints: [{ port: 'metrics' }] },
      },
    ]);
    const key = `PodMonitor.${MON}/shop/worker`;
    await vi.waitFor(() => expect(referrer(`rules/PodMonitor.${MON}`, key)?.state).toBe('NoMatch'));
    source.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'worker-1', namespace: 'shop', labels: { app: 'worker' } },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    await vi.waitFor(() => expect(referrer(`rules/PodMonitor.${MON}`, key)?.state).toBe('Resolved'));
  });

  it('a Prometheus picks monitors and rules: absent selector none, {} all, absent namespace selector its own', () => {
    const rs = builtinRuleSet(['prometheus']);
    const prometheus: KubeObject = {
      apiVersion: `${MON}/v1`,
      kind: 'Prometheus',
      metadata: { name: 'main', namespace: 'monitoring' },
      spec: {
        serviceMonitorSelector: {},
        serviceMonitorNamespaceSelector: { matchLabels: { team: 'shop' } },
        ruleSelector: { matchLabels: { role: 'alerts' } },
      },
    };
    expect(
      extractSelectors(rs, prometheus).map((f) => [f.fieldPath, f.kind.kind, f.namespaceSelector, f.onNoMatch]),
    ).toEqual([
      ['spec.serviceMonitorSelector', 'ServiceMonitor', { matchLabels: { team: 'shop' } }, 'warn'],
      ['spec.ruleSelector', 'PrometheusRule', undefined, 'warn'],
    ]);
  });

  it('a Prometheus selects the ServiceMonitors of the namespaces its namespace selector matches', async () => {
    const { source, referrer } = observe([
      namespace('monitoring'),
      namespace('shop', { team: 'shop' }),
      serviceMonitor({ selector: {} }),
      {
        apiVersion: `${MON}/v1`,
        kind: 'Prometheus',
        metadata: { name: 'main', namespace: 'monitoring' },
        spec: {
          serviceMonitorSelector: {},
          serviceMonitorNamespaceSelector: { matchLabels: { team: 'payments' } },
        },
      },
    ]);
    const P = `rules/Prometheus.${MON}`;
    const key = `Prometheus.${MON}/monitoring/main`;
    // Matching nothing is a warning: a Prometheus without monitors still runs.
    await vi.waitFor(() => expect(referrer(P, key)?.state).toBe('Resolved'));
    expect(manager!.registry.referencesOf(P, key)).toEqual([]);
    source.apply(namespace('shop', { team: 'payments' }));
    await vi.waitFor(() =>
      expect(manager!.registry.referencesOf(P, key).map((r) => [r.referent, r.fieldPath])).toEqual([
        [SM_KEY, 'spec.serviceMonitorSelector'],
      ]),
    );
  });

  it('reads the Prometheus Operator namespace selector strictly, naming the field', () => {
    const form = 'anyOrMatchNames';
    expect(parseNamespaceSelector({}, 'spec.namespaceSelector', form)).toEqual({ ok: true, value: undefined });
    expect(parseNamespaceSelector({ any: false, matchNames: [] }, 'f', form)).toEqual({ ok: true, value: undefined });
    expect(parseNamespaceSelector({ matchNames: [] })).toEqual({ ok: true, value: undefined });
    expect(parseNamespaceSelector({}, 'f', 'labelSelector')).toMatchObject({ ok: true, value: { type: 'labels' } });
    const bad = parseNamespaceSelector({ matchLabels: { a: 'b' } }, 'spec.namespaceSelector', form);
    expect(!bad.ok && bad.error.message).toMatch(
      /^spec\.namespaceSelector\.matchLabels is not a field of this namespace selector: use any or matchNames/,
    );
    const notBool = parseNamespaceSelector({ any: 'yes' }, 'spec.namespaceSelector', form);
    expect(!notBool.ok && notBool.error.message).toMatch(
      /^spec\.namespaceSelector\.any must be true or false, got "yes"/,
    );
  });
});
