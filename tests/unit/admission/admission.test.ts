import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  Admission,
  ENFORCE_LABEL,
  GraceTracker,
  MAX_WARNINGS,
  reviewAdmission,
  type AdmissionDeps,
} from '@/lib/admission';
import { MemoryInformerSource } from '@/lib/engine';
import { builtinRuleSet, observeRuleSet, readReferenceRules } from '@/lib/rules';

const rules = builtinRuleSet(['core']);

function pod(ns: string, secret: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'worker', namespace: ns },
    spec: {
      containers: [{ name: 'c', image: 'x' }],
      volumes: [{ name: 'db', secret: { secretName: secret, ...extra } }],
    },
  };
}

function deployment(ns: string, configMap: string) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: ns },
    spec: {
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'x', envFrom: [{ configMapRef: { name: configMap } }] }] },
      },
    },
  };
}

function review(object: unknown, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', operation: 'CREATE', object, ...extra },
  };
}

async function setup(opts: { graceMs?: number; onResolved?: (e: { message: string }) => void } = {}) {
  const source = new MemoryInformerSource({ priming: 'sync' });
  source.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  source.apply({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'strict', labels: { [ENFORCE_LABEL]: 'deny' } },
  });
  source.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password', namespace: 'shop' } });
  source.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config', namespace: 'shop' } });
  const observer = observeRuleSet(rules);
  const admission = new Admission({
    source,
    ruleSet: rules,
    readiness: (k) => observer.readiness(k),
    graceMs: opts.graceMs ?? 30_000,
    onResolved: opts.onResolved,
  });
  await admission.prime();
  return { source, admission };
}

let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.map((s) => s()));
  stops = [];
});

async function started(opts: Parameters<typeof setup>[0] = {}) {
  const s = await setup(opts);
  stops.push(() => s.admission.stop());
  return s;
}

describe('Admission', () => {
  it('warns in kubectl style about a typo, with the close name, and stays allowed', async () => {
    const { admission } = await started();
    const out = admission.review(review(pod('shop', 'db-pasword')));
    expect(out.response).toEqual({
      uid: 'u-1',
      allowed: true,
      warnings: ['spec.volumes[0].secret.secretName: Secret shop/db-pasword does not exist; did you mean db-password?'],
    });
  });

  it('checks the Pod template of a Deployment, under its own field path', async () => {
    const { admission } = await started();
    const out = admission.review(review(deployment('shop', 'web-confg')));
    expect(out.response.warnings).toEqual([
      'spec.template.spec.containers[0].envFrom[0].configMapRef.name: ConfigMap shop/web-confg does not exist; did you mean web-config?',
    ]);
  });

  it('says "does not exist yet" when no name is close', async () => {
    const { admission } = await started();
    const out = admission.review(review(deployment('shop', 'orders-settings')));
    expect(out.response.warnings).toEqual([
      'spec.template.spec.containers[0].envFrom[0].configMapRef.name: ConfigMap shop/orders-settings does not exist yet',
    ]);
  });

  it("judges an UPDATE's new object, not its oldObject (kubectl apply or edit of an object that exists is a PATCH)", async () => {
    const { admission } = await started();
    const patchShaped = (object: unknown, oldObject: unknown) =>
      review(object, {
        operation: 'UPDATE',
        namespace: 'shop',
        name: 'worker',
        oldObject,
        options: { apiVersion: 'meta.k8s.io/v1', kind: 'PatchOptions', fieldManager: 'kubectl-client-side-apply' },
      });
    expect(
      admission.review(patchShaped(pod('shop', 'db-pasword'), pod('shop', 'db-password'))).response.warnings,
    ).toEqual(['spec.volumes[0].secret.secretName: Secret shop/db-pasword does not exist; did you mean db-password?']);
    expect(admission.review(patchShaped(pod('shop', 'db-password'), pod('shop', 'db-pasword'))).response).toEqual({
      uid: 'u-1',
      allowed: true,
    });
  });

  it('answers a correct object without warnings', async () => {
    const { admission } = await started();
    expect(admission.review(review(pod('shop', 'db-password'))).response).toEqual({ uid: 'u-1', allowed: true });
  });

  it('respects optional: true', async () => {
    const { admission } = await started();
    expect(admission.review(review(pod('shop', 'nope', { optional: true }))).response.warnings).toBeUndefined();
  });

  it('gives a softer warning for a referent that exists but is not ready', async () => {
    const { source, admission } = await started();
    source.apply({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'shop' },
      status: { phase: 'Pending' },
    });
    const p = pod('shop', 'db-password');
    (p.spec.volumes as unknown[]).push({ name: 'data', persistentVolumeClaim: { claimName: 'data' } });
    const w = admission.review(review(p)).response.warnings ?? [];
    expect(w).toHaveLength(1);
    expect(w[0]).toMatch(
      /^spec\.volumes\[1\]\.persistentVolumeClaim\.claimName: PersistentVolumeClaim shop\/data exists but is not ready yet/,
    );
    expect(w[0]).not.toContain('does not exist');
  });

  it('reads the rules in force at each review: a ReferenceRules that joins them warns from then on', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    source.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    source.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password', namespace: 'shop' } });
    const platform = readReferenceRules('platform/settings', {
      rules: [
        {
          referrer: { kind: 'ConfigMap' },
          references: [
            { path: 'data.credentials', referent: { kind: 'Secret' } },
            { path: 'data.database', referent: { group: 'acme.example', kind: 'Database' } },
          ],
        },
      ],
    });
    if (!platform.ok) throw new Error(platform.problems.join('; '));
    let inForce = rules;
    const admission = new Admission({ source, ruleSet: () => inForce });
    stops.push(() => admission.stop());
    await admission.prime();
    const settings = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'shop' },
      data: { credentials: 'db-pasword', database: 'orders' },
    };
    expect(admission.check('CREATE', settings).warnings).toEqual([]);

    inForce = builtinRuleSet(['core'], [platform.doc]);
    // The referent kind only the new rules name is primed for the reviews to come.
    expect(admission.caches.isPrimed('Database.acme.example')).toBe(false);
    expect(admission.check('CREATE', settings).warnings).toEqual([
      'data.credentials: Secret shop/db-pasword does not exist; did you mean db-password?',
      'data.database: Database.acme.example shop/orders does not exist yet',
    ]);
    await vi.waitFor(() => expect(admission.caches.isPrimed('Database.acme.example')).toBe(true));
  });

  it('says nothing of a kind whose cache is forbidden or not primed', async () => {
    const source = new MemoryInformerSource({ priming: 'manual' });
    const admission = new Admission({ source, ruleSet: rules });
    stops.push(() => admission.stop());
    expect(admission.review(review(pod('shop', 'db-pasword'))).response.warnings).toBeUndefined();
    const forbidden = new MemoryInformerSource({ priming: 'sync' });
    forbidden.forbid('Secret');
    const a2 = new Admission({ source: forbidden, ruleSet: rules });
    stops.push(() => a2.stop());
    expect(a2.review(review(pod('shop', 'db-pasword'))).response).toEqual({ uid: 'u-1', allowed: true });
  });

  it('denies in a namespace labelled refwatch.dev/enforce=deny, listing the warnings', async () => {
    const { admission } = await started();
    const out = admission.review(review(pod('strict', 'db-pasword')));
    expect(out.response.allowed).toBe(false);
    expect(out.response.status?.code).toBe(403);
    expect(out.response.status?.message).toContain(
      'spec.volumes[0].secret.secretName: Secret strict/db-pasword does not exist yet',
    );
    // Nothing to warn about: allowed even there.
    const ok = admission.review(review(deployment('strict', '')));
    expect(ok.response.allowed).toBe(true);
  });

  it('keeps warnings few and one line each', async () => {
    const { admission } = await started();
    const p = pod('shop', 'a');
    p.spec.volumes = Array.from({ length: 15 }, (_, i) => ({ name: `v${i}`, secret: { secretName: `missing-${i}` } }));
    const w = admission.review(review(p)).response.warnings ?? [];
    expect(w).toHaveLength(MAX_WARNINGS);
    expect(w.at(-1)).toBe('refwatch: 6 more dangling references not shown');
  });

  it('records a warning that resolved itself when its referent appears within the grace', async () => {
    const resolved: string[] = [];
    const { source, admission } = await started({ onResolved: (e) => resolved.push(e.message) });
    admission.review(review(deployment('shop', 'late-config')));
    // A dry run is not remembered.
    admission.review(review(deployment('shop', 'dry-config'), { dryRun: true }));
    source.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry-config', namespace: 'shop' } });
    source.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late-config', namespace: 'shop' } });
    expect(resolved).toHaveLength(1);
    expect(resolved[0]).toMatch(
      /^admission warning resolved itself: ConfigMap shop\/late-config appeared [\d.]+s after Deployment\.apps\/shop\/web named it/,
    );
  });

  it('releases its caches at stop', async () => {
    const { source, admission } = await setup();
    expect(source.openWatches('Secret')).toBe(1);
    await admission.stop();
    expect(source.openWatches('Secret')).toBe(0);
    expect(source.openWatches('Namespace')).toBe(0);
  });
});

describe('GraceTracker', () => {
  it('forgets a warning after the grace, and stops its timer', async () => {
    vi.useFakeTimers();
    try {
      const seen: string[] = [];
      const g = new GraceTracker({ graceMs: 1000, onResolved: (e) => seen.push(e.referent) });
      g.warned('Pod/shop/a', [
        { fieldPath: 'f', referent: 'Secret/shop/x', problem: 'missing', suggestions: [], message: '', fix: '' },
      ]);
      expect(g.size).toBe(1);
      vi.advanceTimersByTime(2100);
      expect(g.size).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
      g.appeared('Secret/shop/x');
      expect(seen).toEqual([]);
      g.warned('Pod/shop/a', [
        { fieldPath: 'f', referent: 'Secret/shop/y', problem: 'missing', suggestions: [], message: '', fix: '' },
      ]);
      g.stop();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('reviewAdmission on arbitrary input', () => {
  let admission: Admission;
  beforeAll(async () => {
    admission = (await setup()).admission;
  });
  afterAll(() => admission.stop());
  const labels = (ns: string) => (ns === 'strict' ? { [ENFORCE_LABEL]: 'deny' } : {});
  const throwing: AdmissionDeps = {
    ruleSet: rules,
    lookup: {
      lookup() {
        throw new Error('boom');
      },
    },
  };

  it('never throws and never denies outside a deny namespace, for creates and PATCH-shaped updates alike', async () => {
    const namespace = fc.constantFrom('shop', 'strict', 'other', '', undefined);
    const object = fc.oneof(
      fc.jsonValue(),
      fc.record({
        apiVersion: fc.constantFrom('v1', 'apps/v1', 5),
        kind: fc.constantFrom('Pod', 'Deployment', 'x'),
        metadata: fc.jsonValue(),
        spec: fc.jsonValue(),
      }),
      fc.record({
        apiVersion: fc.constant('v1'),
        kind: fc.constant('Pod'),
        metadata: fc.record({ name: fc.string(), namespace }),
        spec: fc.record({
          volumes: fc.array(fc.record({ secret: fc.record({ secretName: fc.oneof(fc.string(), fc.jsonValue()) }) })),
        }),
      }),
    );
    // The fields of kube-apiserver's requests: a PATCH arrives as an UPDATE with oldObject and PatchOptions.
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record({
        request: fc.record(
          {
            uid: fc.oneof(fc.string(), fc.jsonValue()),
            operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 7),
            namespace,
            name: fc.oneof(fc.string(), fc.jsonValue()),
            subResource: fc.constantFrom('status', 'scale', '', 3),
            object,
            oldObject: object,
            options: fc.oneof(
              fc.jsonValue(),
              fc.record({
                kind: fc.constantFrom('CreateOptions', 'UpdateOptions', 'PatchOptions'),
                fieldManager: fc.string(),
              }),
            ),
            dryRun: fc.oneof(fc.boolean(), fc.jsonValue()),
          },
          { requiredKeys: [] },
        ),
      }),
      fc.record({
        request: fc.record({
          uid: fc.string(),
          operation: fc.constant('UPDATE'),
          namespace,
          object,
          oldObject: object,
          options: fc.constant({ apiVersion: 'meta.k8s.io/v1', kind: 'PatchOptions' }),
        }),
      }),
    );
    fc.assert(
      fc.property(body, (b) => {
        const out = admission.review(b);
        expect(out.kind).toBe('AdmissionReview');
        expect(typeof out.response.uid).toBe('string');
        const req = (b as { request?: { object?: { metadata?: { namespace?: unknown } }; namespace?: unknown } })
          ?.request;
        const ns = req?.object?.metadata?.namespace || req?.namespace;
        if (!out.response.allowed) expect(labels(String(ns))[ENFORCE_LABEL]).toBe('deny');
        const out2 = reviewAdmission(throwing, b);
        expect(out2.response.allowed).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
