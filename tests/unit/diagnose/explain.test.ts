import { afterEach, describe, expect, it, vi } from 'vitest';
import { explain, type Explanation, type ReferenceExplanation } from '@/lib/diagnose';
import { APP, CACHE, DB, app, appKey, database, dbKey, harness, reconcileApp, type Harness } from './fixtures';

let current: Harness | undefined;
afterEach(async () => {
  await current?.manager.stop();
  current = undefined;
});

function start(h: Harness): Harness {
  current = h;
  h.manager.start();
  return h;
}

function explained(h: Harness, key: string, now?: number): Explanation {
  const r = explain(h.manager, key, { now });
  if (!r.ok) throw r.error;
  return r.value;
}

function onlyReference(h: Harness, key: string, now?: number): ReferenceExplanation {
  const e = explained(h, key, now);
  expect(e.controllers).toHaveLength(1);
  expect(e.controllers[0]!.references).toHaveLength(1);
  return e.controllers[0]!.references[0]!;
}

/** A harness whose Database cache never primes by itself, with web referring to shop/orders. */
async function unprimedDatabase(): Promise<Harness> {
  const h = start(harness({ priming: 'manual' }));
  h.source.prime(APP);
  h.source.apply(app('web', { databaseRef: 'orders' }));
  await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Waiting'));
  expect(h.manager.referenceControllers.state(DB)).toBe('Priming');
  return h;
}

describe('explain', () => {
  it('a typo in the referent name suggests the close name in the same namespace', async () => {
    const h = start(harness());
    h.source.apply(database('orders', true));
    h.source.apply(database('invoices', true));
    h.source.apply(app('web', { databaseRef: 'ordrs' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('NotFound'));

    const e = explained(h, appKey('web'));
    expect(e.object).toBe(appKey('web'));
    expect(e.controllers[0]).toMatchObject({ controller: 'watch', state: 'NotFound' });
    expect(e.controllers[0]!.since).toBeTypeOf('number');
    expect(e.controllers[0]!.references).toEqual([
      {
        referent: dbKey('ordrs'),
        fieldPath: 'spec.databaseRef',
        state: 'NotFound',
        reason: 'NotFound',
        message: 'Database.demo.refwatch.dev/shop/ordrs not found; did you mean orders?',
        fix: 'set spec.databaseRef to orders, or create Database.demo.refwatch.dev/shop/ordrs',
        suggestions: [dbKey('orders')],
      },
    ]);
  });

  it('a referent in another namespace is named, with the field that would point there', async () => {
    const h = start(harness());
    h.source.apply(database('orders', true, 'billing'));
    h.source.apply(app('web', { databaseRef: { name: 'orders' } }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('NotFound'));

    const ref = onlyReference(h, appKey('web'));
    expect(ref.state).toBe('NotFound');
    expect(ref.message).toBe('Database.demo.refwatch.dev/shop/orders not found; orders exists in namespace billing');
    expect(ref.fix).toBe('set spec.databaseRef.namespace to billing, or move orders to namespace shop');
    expect(ref.suggestions).toEqual([dbKey('orders', 'billing')]);
  });

  it('a missing referent with nothing close says how to create or list it', async () => {
    const h = start(harness());
    h.source.apply(database('orders', true));
    h.source.apply(app('web', { databaseRef: 'payments-primary' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('NotFound'));

    const ref = onlyReference(h, appKey('web'));
    expect(ref.message).toBe('Database.demo.refwatch.dev/shop/payments-primary not found');
    expect(ref.fix).toBe(
      'create Database.demo.refwatch.dev/shop/payments-primary, or point spec.databaseRef at an existing Database.demo.refwatch.dev (kubectl get databases.demo.refwatch.dev -n shop)',
    );
    expect(ref.suggestions).toBeUndefined();
  });

  it('a not-ready referent shows its condition reason and message', async () => {
    const h = start(harness());
    h.source.apply(
      database('orders', false, 'shop', { reason: 'VolumePending', message: 'waiting for the volume to attach' }),
    );
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Waiting'));

    const ref = onlyReference(h, appKey('web'));
    expect(ref).toMatchObject({ state: 'NotReady', reason: 'VolumePending' });
    expect(ref.message).toBe(
      'Database.demo.refwatch.dev/shop/orders is not Ready: VolumePending: waiting for the volume to attach',
    );
    expect(ref.fix).toBe(
      'wait for Database.demo.refwatch.dev/shop/orders to become Ready, or fix what its condition reports (kubectl describe databases.demo.refwatch.dev -n shop orders)',
    );
  });

  it('a ready referent is Ready with nothing to fix, and follows the cluster as it changes', async () => {
    const h = start(harness());
    h.source.apply(database('orders', false));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Waiting'));
    h.source.apply(database('orders', true));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Resolved'));
    expect(onlyReference(h, appKey('web'))).toMatchObject({ state: 'Ready', fix: '' });
    expect(explained(h, appKey('web')).controllers[0]!.state).toBe('Resolved');
  });

  it('a kind whose CRD is not installed says which CustomResourceDefinition to install', async () => {
    const h = await unprimedDatabase();
    h.source.fail(DB, {
      reason: 'KindUnknown',
      message: 'no resource serves kind Database.demo.refwatch.dev: is its CustomResourceDefinition installed?',
    });

    const ref = onlyReference(h, appKey('web'));
    expect(ref.state).toBe('KindUnknown');
    expect(ref.reason).toBe('KindUnknown');
    expect(ref.message).toBe(
      'no resource serves kind Database.demo.refwatch.dev: is its CustomResourceDefinition installed?',
    );
    expect(ref.fix).toBe(
      'install the CustomResourceDefinition for databases.demo.refwatch.dev, or correct the kind spec.databaseRef refers to',
    );
  });

  it('a forbidden watch shows the exact RBAC rule that is missing', async () => {
    const h = await unprimedDatabase();
    h.source.fail(DB, {
      reason: 'Forbidden',
      message: 'forbidden to list and watch Database.demo.refwatch.dev',
      missingRule: { verbs: ['get', 'list', 'watch'], apiGroup: 'demo.refwatch.dev', resource: 'databases' },
    });

    const ref = onlyReference(h, appKey('web'));
    expect(ref).toMatchObject({
      state: 'Forbidden',
      reason: 'Forbidden',
      message: 'forbidden to list and watch Database.demo.refwatch.dev',
    });
    expect(ref.fix).toBe(
      'grant the controller\'s service account this ClusterRole rule: apiGroups: ["demo.refwatch.dev"], resources: ["databases"], verbs: ["get","list","watch"]',
    );
  });

  it('a forbidden namespaced watch asks for a Role in that namespace', async () => {
    const h = await unprimedDatabase();
    h.source.fail(DB, {
      reason: 'Forbidden',
      message: 'forbidden',
      missingRule: {
        verbs: ['list', 'watch'],
        apiGroup: 'demo.refwatch.dev',
        resource: 'databases',
        namespace: 'shop',
      },
    });
    expect(onlyReference(h, appKey('web')).fix).toBe(
      'grant the controller\'s service account this rule in a Role in namespace shop: apiGroups: ["demo.refwatch.dev"], resources: ["databases"], verbs: ["list","watch"]',
    );
  });

  it('a cache still loading says how long it has been priming, and is never NotFound', async () => {
    const h = await unprimedDatabase();
    const startedAt = h.manager.changelog.get('controller', DB)!.startedAt;

    const ref = onlyReference(h, appKey('web'), startedAt + 12_300);
    expect(ref).toMatchObject({ state: 'NotPrimed', reason: 'Priming' });
    expect(ref.message).toBe('the Database.demo.refwatch.dev cache has been loading its initial snapshot for 12.3 s');
    expect(ref.fix).toMatch(/^wait: nothing is judged missing until the cache is primed/);

    h.source.prime(DB);
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('NotFound'));
    expect(onlyReference(h, appKey('web')).state).toBe('NotFound');
  });

  it('a failing watch shows its last error and when it retries; priming clears it', async () => {
    const h = await unprimedDatabase();
    const now = Date.now();
    h.source.fail(DB, { reason: 'Unreachable', message: 'connect ECONNREFUSED 127.0.0.1:6443', retryAt: now + 4000 });

    const ref = onlyReference(h, appKey('web'), now);
    expect(ref).toMatchObject({ state: 'WatchError', reason: 'Unreachable' });
    expect(ref.message).toBe('the Database.demo.refwatch.dev watch is failing: connect ECONNREFUSED 127.0.0.1:6443');
    expect(ref.fix).toBe(
      'check that the API server is reachable from refwatch (its address, the network, any proxy); the watch retries in 4.0 s',
    );
    expect(onlyReference(h, appKey('web'), now + 5000).fix).toMatch(/the watch is retrying now$/);

    h.source.apply(database('orders', true));
    h.source.prime(DB);
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Resolved'));
    expect(onlyReference(h, appKey('web')).state).toBe('Ready');
  });

  it('a watch failing after priming marks what the cache says as possibly stale', async () => {
    const h = start(harness());
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('NotFound'));
    h.source.fail(DB, { reason: 'Throttled', message: '429 Too Many Requests' });

    const ref = onlyReference(h, appKey('web'));
    expect(ref.state).toBe('NotFound');
    expect(ref.message).toBe(
      'Database.demo.refwatch.dev/shop/orders not found (the Database.demo.refwatch.dev watch is failing with Throttled, so the cache may be stale)',
    );
  });

  it('lists every reference in declaration order, each with its own state', async () => {
    const h = start(harness());
    h.source.apply(database('orders', true));
    h.source.apply(app('web', { databaseRef: 'orders', cacheRef: 'sessions' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('NotFound'));

    const refs = explained(h, appKey('web')).controllers[0]!.references;
    expect(refs.map((r) => [r.referent, r.state])).toEqual([
      [dbKey('orders'), 'Ready'],
      [`${CACHE}/shop/sessions`, 'NotFound'],
    ]);
  });

  it('shows each controller that reconciles the referrer, or only the one asked for', async () => {
    const h = harness();
    h.manager.addController({
      name: 'backoff',
      for: { group: 'demo.refwatch.dev', kind: 'App' },
      reconcile: reconcileApp,
    });
    start(h);
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => {
      expect(h.state(appKey('web'))).toBe('NotFound');
      expect(h.state(appKey('web'), 'backoff')).toBe('NotFound');
    });

    expect(explained(h, appKey('web')).controllers.map((c) => c.controller)).toEqual(['watch', 'backoff']);
    const one = explain(h.manager, appKey('web'), { controller: 'backoff' });
    expect(one.ok && one.value.controllers.map((c) => c.controller)).toEqual(['backoff']);
    const unknown = explain(h.manager, appKey('web'), { controller: 'nope' });
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) {
      expect(unknown.error.code).toBe('NotFound');
      expect(unknown.error.field).toBe('controller');
      expect(unknown.error.message).toBe(
        'controller "nope" does not exist; controllers: watch, backoff (example: watch)',
      );
    }
  });

  it('a reconcile error is shown with its message', async () => {
    const h = start(
      harness({
        reconcile: (ctx) => {
          reconcileApp(ctx);
          throw new Error('spec.replicas must be positive');
        },
      }),
    );
    h.source.apply(database('orders', true));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Error'));
    const c = explained(h, appKey('web')).controllers[0]!;
    expect(c).toMatchObject({ state: 'Error', reason: 'ReconcileError', message: 'spec.replicas must be positive' });
    expect(c.references.map((r) => r.state)).toEqual(['Ready']);
  });

  it('a key that is no referrer is NotFound, naming the key and close referrer keys', async () => {
    const h = start(harness());
    h.source.apply(app('web', { databaseRef: 'orders' }));
    h.source.apply(app('web', { databaseRef: 'orders' }, 'staging'));
    await vi.waitFor(() => {
      expect(h.state(appKey('web'))).toBe('NotFound');
      expect(h.state(appKey('web', 'staging'))).toBe('NotFound');
    });

    const typo = explain(h.manager, appKey('webb'));
    expect(typo.ok).toBe(false);
    if (typo.ok) return;
    expect(typo.error.code).toBe('NotFound');
    expect(typo.error.field).toBe('object');
    expect(typo.error.message).toBe(
      'App.demo.refwatch.dev/shop/webb is not a referrer of any controller; did you mean App.demo.refwatch.dev/shop/web?',
    );
    expect(typo.error.suggestions).toEqual([appKey('web')]);

    const elsewhere = explain(h.manager, appKey('web', 'prod'));
    expect(!elsewhere.ok && elsewhere.error.suggestions).toEqual([appKey('web'), appKey('web', 'staging')]);

    const referent = explain(h.manager, dbKey('orders'));
    expect(!referent.ok && referent.error.message).toBe(
      'Database.demo.refwatch.dev/shop/orders is not a referrer of any controller; it is a referent, referred to by App.demo.refwatch.dev/shop/web (watch): explain one of those',
    );

    const far = explain(h.manager, appKey('checkout-frontend'));
    expect(!far.ok && far.error.message).toBe(
      'App.demo.refwatch.dev/shop/checkout-frontend is not a referrer of any controller',
    );
  });

  it('an invalid key is an error naming the object parameter', () => {
    const h = start(harness());
    const r = explain(h.manager, 'Database.demo.refwatch.dev/Shop/orders');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('InvalidNamespace');
    expect(r.error.field).toBe('object');
    expect(r.error.message).toMatch(/object\.namespace "Shop" is not a valid namespace/);
  });

  it('explaining registers nothing, starts no watch and writes nothing to the change log', async () => {
    const h = start(harness());
    h.source.apply(database('orders', false));
    h.source.apply(app('web', { databaseRef: 'ordrs', cacheRef: 'sessions' }));
    h.source.apply(app('api', { databaseRef: 'orders' }));
    await vi.waitFor(() => {
      expect(h.state(appKey('web'))).toBe('NotFound');
      expect(h.state(appKey('api'))).toBe('Waiting');
    });
    const { registry, changelog } = h.manager;
    const before = {
      referrers: registry.referrers().map((r) => [r.controller, r.key, registry.referencesOf(r.controller, r.key)]),
      edges: registry.edgeCount,
      kinds: registry.activeKinds().sort(),
      revision: changelog.revision,
      opened: h.source.opened,
    };

    for (const key of [
      appKey('web'),
      appKey('api'),
      appKey('nope'),
      dbKey('orders'),
      'Secret/shop/db-password',
      `${CACHE}/shop/sessions`,
    ])
      explain(h.manager, key);

    expect({
      referrers: registry.referrers().map((r) => [r.controller, r.key, registry.referencesOf(r.controller, r.key)]),
      edges: registry.edgeCount,
      kinds: registry.activeKinds().sort(),
      revision: changelog.revision,
      opened: h.source.opened,
    }).toEqual(before);
    expect(h.manager.referenceControllers.state('Secret')).toBeUndefined();
  });
});
