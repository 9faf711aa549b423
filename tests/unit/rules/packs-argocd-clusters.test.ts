import { afterEach, describe, expect, it, vi } from 'vitest';
import { explain, stuck } from '@/lib/diagnose';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import { builtinRuleSet, extractLookups, observeRuleSet, parseRulesText } from '@/lib/rules';
import { checkObject } from '@/lib/admission/check';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const TOKEN = 'eyJhbGciOi-very-secret-bearer-token';
const CONTROLLER = 'rules/Application.argoproj.io';
const APP_KEY = 'Application.argoproj.io/argocd/guestbook';

function application(destination: Record<string, string>, namespace = 'argocd'): KubeObject {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'guestbook', namespace },
    spec: { project: 'default', destination: { namespace: 'guestbook', ...destination } },
  };
}

function appProject(): KubeObject {
  return { apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', metadata: { name: 'default', namespace: 'argocd' } };
}

function clusterSecret(secretName: string, name: string, server: string, labelled = true): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: secretName,
      namespace: 'argocd',
      labels: labelled ? { 'argocd.argoproj.io/secret-type': 'cluster' } : {},
    },
    type: 'Opaque',
    data: { name: b64(name), server: b64(server), config: b64(JSON.stringify({ bearerToken: TOKEN })) },
  };
}

describe('argocd pack: Application → destination cluster Secret', () => {
  const rs = builtinRuleSet(['argocd']);

  it('finds the destination by name or server, and none for the in-cluster destination', () => {
    expect(extractLookups(rs, application({ name: 'prod-eu' }))).toEqual([
      expect.objectContaining({
        fieldPath: 'spec.destination.name',
        value: 'prod-eu',
        kind: { group: '', kind: 'Secret' },
        labelSelector: 'argocd.argoproj.io/secret-type=cluster',
        field: 'data.name',
        decode: 'base64',
      }),
    ]);
    expect(extractLookups(rs, application({ server: 'https://10.0.0.1:6443' }))).toEqual([
      expect.objectContaining({
        fieldPath: 'spec.destination.server',
        value: 'https://10.0.0.1:6443',
        field: 'data.server',
      }),
    ]);
    expect(extractLookups(rs, application({ server: 'https://kubernetes.default.svc' }))).toEqual([]);
    expect(extractLookups(rs, application({ name: 'in-cluster' }))).toEqual([]);
    expect(extractLookups(rs, application({}))).toEqual([]);
  });

  it('is skipped by the admission check, which cannot see the cluster Secrets: no warning, right or wrong', () => {
    const nothingExists = { lookup: () => ({ state: 'missing' as const, similar: [] }) };
    const findings = checkObject(rs, nothingExists, application({ name: 'prod-eu' }));
    expect(findings.map((f) => f.fieldPath)).toEqual(['spec.project']);
  });

  it('reads a lookup in a rules file strictly, naming the field and the fix', () => {
    const r = parseRulesText(
      `rules:
  - referrer: { group: example.dev, kind: Deployment }
    references:
      - path: spec.cluster
        lookup: { referent: { kind: Secret }, labelSelector: "team in (a)", field: data.name }
`,
      'rules.yaml',
    );
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error.issues[0]).toMatchObject({
        path: 'rules[0].references[0].lookup.labelSelector',
        reason: expect.stringMatching(/key=value pairs separated by commas/),
      });
  });
});

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

function observe() {
  const source = new MemoryInformerSource({ priming: 'sync' });
  const observer = observeRuleSet(builtinRuleSet(['core', 'argocd'], []));
  manager = new Manager({ source, statsIntervalMs: 0, readiness: (kind) => observer.readiness(kind) });
  observer.attach(manager);
  manager.start();
  const m = manager;
  const referrer = () => m.changelog.get('referrer', `${CONTROLLER}|${APP_KEY}`);
  const idle = () =>
    vi.waitFor(() => expect(m.controller(CONTROLLER)!.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
  return { source, manager: m, referrer, idle };
}

describe('argocd pack, observed', () => {
  it('is stuck on a cluster name nobody registered, resolves once its Secret exists, and is stuck again once renamed', async () => {
    const { source, manager: m, referrer, idle } = observe();
    source.apply(appProject());
    source.apply(clusterSecret('cluster-prod-eu1', 'prod-eu1', 'https://prod-eu1.example.com'));
    source.apply(application({ name: 'prod-eu' }));
    await idle();
    expect(referrer()).toMatchObject({
      state: 'NoMatch',
      message:
        'no Argo CD cluster named "prod-eu" is registered (Secrets labelled argocd.argoproj.io/secret-type=cluster in argocd); did you mean "prod-eu1"?',
    });

    expect(stuck(m, { olderThan: 0 }).map(({ key, reason, message, fix }) => ({ key, reason, message, fix }))).toEqual([
      {
        key: APP_KEY,
        reason: 'NoMatch',
        message: referrer()!.message,
        fix: 'set spec.destination.name to "prod-eu1", or create a Secret in argocd labelled argocd.argoproj.io/secret-type=cluster whose data.name decodes to "prod-eu"',
      },
    ]);

    source.apply(clusterSecret('cluster-prod-eu', 'prod-eu', 'https://prod-eu.example.com'));
    await vi.waitFor(() => expect(referrer()).toMatchObject({ state: 'Resolved' }));
    const refs = m.registry.referencesOf(CONTROLLER, APP_KEY);
    expect(refs).toContainEqual({ referent: 'Secret/argocd/cluster-prod-eu', fieldPath: 'spec.destination.name' });

    source.apply(clusterSecret('cluster-prod-eu', 'prod-eu2', 'https://prod-eu.example.com'));
    await vi.waitFor(() => expect(referrer()).toMatchObject({ state: 'NoMatch' }));
    expect(referrer()!.message).toMatch(/^no Argo CD cluster named "prod-eu" is registered/);

    // No credential anywhere the API, the stream or the dashboard read.
    const everything = JSON.stringify([m.changelog.snapshot(), explain(m, APP_KEY)]);
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain(b64(JSON.stringify({ bearerToken: TOKEN })));
  });

  it('matches a destination server, and the in-cluster destination is no reference and opens no cluster watch', async () => {
    const { source, manager: m, referrer, idle } = observe();
    source.apply(appProject());
    source.apply(clusterSecret('cluster-a', 'a', 'https://a.example.com'));
    source.apply(application({ server: 'https://a.example.com' }));
    await vi.waitFor(() => expect(referrer()).toMatchObject({ state: 'Resolved' }));
    expect(m.registry.referencesOf(CONTROLLER, APP_KEY)).toContainEqual({
      referent: 'Secret/argocd/cluster-a',
      fieldPath: 'spec.destination.server',
    });

    source.apply(application({ server: 'https://kubernetes.default.svc' }));
    await idle();
    await vi.waitFor(() => expect(source.openedTargets.length).toBeGreaterThan(0));
    expect(referrer()).toMatchObject({ state: 'Resolved' });
    expect(m.registry.referencesOf(CONTROLLER, APP_KEY).map((r) => r.fieldPath)).toEqual(['spec.project']);
    await vi.waitFor(() =>
      expect(m.source.watches().some((w) => w.target.labelSelector === 'argocd.argoproj.io/secret-type=cluster')).toBe(
        false,
      ),
    );
  });
});
