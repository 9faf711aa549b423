import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryInformerSource } from '@/lib/engine';
import { explain } from '@/lib/diagnose';
import { app, appKey, database, dbKey, harness, lastStates, type Harness } from './fixtures';

const DB = 'Database.demo.refwatch.dev';

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

function referenceOf(h: Harness, referrer: string) {
  const e = explain(h.manager, referrer);
  if (!e.ok) throw e.error;
  return e.value.controllers[0]!.references[0]!;
}

describe('Manager namespaces option', () => {
  it('watches each kind once per listed namespace, never cluster-wide, and resolves references there', async () => {
    const h = start(harness({ namespaces: ['shop', 'web'] }));
    h.source.apply(database('orders', true, 'shop'));
    h.source.apply(database('carts', true, 'web'));
    h.source.apply(app('a', { databaseRef: 'orders' }, 'shop'));
    h.source.apply(app('b', { databaseRef: 'carts' }, 'web'));
    h.source.apply(app('c', { databaseRef: 'orders' }, 'elsewhere'));
    await vi.waitFor(() => {
      expect(lastStates(h, appKey('a', 'shop'))).toEqual(['Ready']);
      expect(lastStates(h, appKey('b', 'web'))).toEqual(['Ready']);
    });
    expect(h.reconciles(appKey('c', 'elsewhere'))).toBe(0);
    expect([...h.source.openedTargets].sort()).toEqual([
      'App.demo.refwatch.dev|shop|',
      'App.demo.refwatch.dev|web|',
      `${DB}|shop|`,
      `${DB}|web|`,
    ]);
    expect(h.manager.referenceControllers.state(DB, 'shop')).toBe('Active');
    expect(h.manager.referenceControllers.state(DB)).toBeUndefined();
    const entity = h.manager.changelog.get('controller', `${DB}/web`);
    expect(entity).toMatchObject({ kind: DB, namespace: 'web', state: 'Active', references: 1 });
  });

  it('a reference into an unlisted namespace is OutOfScope, names the option, and opens no watch', async () => {
    const h = start(harness({ namespaces: ['shop'] }));
    h.source.apply(database('orders', true, 'billing'));
    h.source.apply(app('a', { databaseRef: 'billing/orders' }, 'shop'));
    await vi.waitFor(() => expect(lastStates(h, appKey('a'))).toEqual(['NotPrimed']));
    const r = h.seen.get(appKey('a'))!.at(-1)![0]!;
    expect(r).toMatchObject({ reason: 'OutOfScope', error: { reason: 'OutOfScope' } });
    expect(r.message).toContain(
      "outside the namespaces this manager watches (shop): add billing to the Manager's namespaces option",
    );
    expect(h.source.openWatches(DB)).toBe(0);
    expect(h.manager.changelog.get('referent', dbKey('orders', 'billing'))).toMatchObject({ state: 'Forbidden' });
    const ref = referenceOf(h, appKey('a'));
    expect(ref).toMatchObject({ state: 'Forbidden', reason: 'OutOfScope' });
    expect(ref.fix).toContain('--namespaces');
  });

  it('a namespace whose last reference goes is cancelled after grace; the others keep their watch', async () => {
    const h = start(harness({ namespaces: ['shop', 'web'], grace: 30 }));
    h.source.apply(app('a', { databaseRef: 'orders' }, 'shop'));
    h.source.apply(app('b', { databaseRef: 'carts' }, 'web'));
    await vi.waitFor(() => expect(h.source.openWatches(DB)).toBe(2));
    h.source.apply(app('b', {}, 'web'));
    await vi.waitFor(() => expect(h.manager.referenceControllers.state(DB, 'web')).toBe('Cancelled'));
    expect(h.manager.referenceControllers.state(DB, 'shop')).toBe('Active');
    expect(h.source.openWatches(DB)).toBe(1);
    h.source.apply(app('b', { databaseRef: 'carts' }, 'web'));
    await vi.waitFor(() => expect(h.manager.referenceControllers.state(DB, 'web')).toBe('Active'));
    expect(h.source.openWatches(DB)).toBe(2);
  });

  it('rejects an empty list or a bad name, naming the field', () => {
    expect(() => harness({ namespaces: [] })).toThrow(/namespaces must list at least one namespace/);
    expect(() => harness({ namespaces: ['shop', 'Not_A_Namespace'] })).toThrow(
      /namespaces\[1\] "Not_A_Namespace" is not a valid namespace/,
    );
  });
});

describe('cluster-wide list Forbidden', () => {
  function forbiddenHarness(): Harness {
    const source = new MemoryInformerSource();
    source.forbid(DB);
    return start(harness({ source, grace: 30 }));
  }

  it('watches only the namespaces its referents live in, and lists cluster-wide once', async () => {
    const h = forbiddenHarness();
    h.source.apply(database('orders', true, 'shop'));
    h.source.apply(database('carts', true, 'web'));
    h.source.apply(app('a', { databaseRef: 'orders' }, 'shop'));
    h.source.apply(app('b', { databaseRef: 'carts' }, 'web'));
    await vi.waitFor(() => {
      expect(lastStates(h, appKey('a', 'shop'))).toEqual(['Ready']);
      expect(lastStates(h, appKey('b', 'web'))).toEqual(['Ready']);
    });
    expect(h.manager.referenceControllers.state(DB)).toBe('Cancelled');
    expect(h.manager.changelog.get('controller', DB)).toMatchObject({ state: 'Cancelled', references: 0 });
    expect(h.manager.changelog.get('controller', DB)?.reason).toContain(`listing ${DB} in all namespaces is forbidden`);
    expect(h.manager.changelog.get('controller', `${DB}/shop`)).toMatchObject({ namespace: 'shop', references: 1 });
    expect(h.manager.referenceControllers.state(DB, 'shop')).toBe('Active');
    expect(h.manager.referenceControllers.state(DB, 'web')).toBe('Active');
    // A new namespace gets its own watch; the cluster-wide list is never tried again.
    h.source.apply(database('users', true, 'auth'));
    h.source.apply(app('c', { databaseRef: 'users' }, 'auth'));
    await vi.waitFor(() => expect(lastStates(h, appKey('c', 'auth'))).toEqual(['Ready']));
    expect(h.source.openedTargets.filter((t) => t.startsWith(`${DB}|`))).toEqual([
      `${DB}|*|`,
      `${DB}|shop|`,
      `${DB}|web|`,
      `${DB}|auth|`,
    ]);
  });

  it('a namespace also forbidden is Forbidden, with the missing Role rule in explain', async () => {
    const h = forbiddenHarness();
    h.source.forbid(DB, 'vault');
    h.source.apply(database('keys', true, 'vault'));
    h.source.apply(app('a', { databaseRef: 'keys' }, 'vault'));
    await vi.waitFor(() =>
      expect(h.manager.changelog.get('referent', dbKey('keys', 'vault'))?.state).toBe('Forbidden'),
    );
    const ref = referenceOf(h, appKey('a', 'vault'));
    expect(ref).toMatchObject({ state: 'Forbidden', reason: 'Forbidden' });
    expect(ref.fix).toBe(
      'grant the controller\'s service account this rule in a Role in namespace vault: apiGroups: ["demo.refwatch.dev"], resources: ["databases"], verbs: ["list","watch"]',
    );
  });

  it('a namespace left by its last referent is cancelled after grace', async () => {
    const h = forbiddenHarness();
    h.source.apply(app('a', { databaseRef: 'orders' }, 'shop'));
    h.source.apply(app('b', { databaseRef: 'carts' }, 'web'));
    await vi.waitFor(() => expect(h.source.openWatches(DB)).toBe(2));
    h.source.delete(appKey('b', 'web'));
    await vi.waitFor(() => expect(h.manager.referenceControllers.state(DB, 'web')).toBe('Cancelled'));
    expect(h.source.openWatches(DB)).toBe(1);
    expect(h.manager.referenceControllers.state(DB, 'shop')).toBe('Active');
  });
});
