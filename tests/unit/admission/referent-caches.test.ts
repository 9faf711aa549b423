import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReferentCaches } from '@/lib/admission';
import { SimilarNames } from '@/lib/diagnose/similar-names';
import { MemoryInformerSource } from '@/lib/engine';

/*
 * A did-you-mean search compares a missing name with every name of similar
 * length in its namespace. The same typo is often reviewed again (a dry run
 * then the apply, a retried pipeline): it is searched once per name index,
 * and what is suggested still follows the cache.
 */

const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'shop' } });

afterEach(() => vi.restoreAllMocks());

describe('ReferentCaches: did you mean', () => {
  it('searches a missing referent once per name index, and again once the cache gains a name', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    source.apply(secret('db-password'));
    const caches = new ReferentCaches({ source });
    try {
      caches.prime(['Secret']);
      const searches = vi.spyOn(SimilarNames.prototype, 'similarIn');
      for (let i = 0; i < 3; i++)
        expect(caches.lookup('Secret/shop/db-pasword')).toEqual({ state: 'missing', similar: ['db-password'] });
      expect(searches).toHaveBeenCalledTimes(1);
      // Another typo is its own search.
      expect(caches.lookup('Secret/shop/db-passwrd')).toEqual({ state: 'missing', similar: ['db-password'] });
      expect(searches).toHaveBeenCalledTimes(2);

      source.apply(secret('db-pasword2'));
      expect(caches.lookup('Secret/shop/db-pasword')).toEqual({
        state: 'missing',
        similar: ['db-password', 'db-pasword2'],
      });
      expect(searches).toHaveBeenCalledTimes(3);
    } finally {
      await caches.stop();
      await source.stop();
    }
  });

  it('never suggests a remembered name that has gone from the cache', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    for (let i = 0; i < 5_001; i++) source.apply(secret(`s-${i}`));
    source.apply(secret('db-password'));
    const caches = new ReferentCaches({ source });
    try {
      caches.prime(['Secret']);
      expect(caches.lookup('Secret/shop/db-pasword').state).toBe('missing');
      expect(caches.lookup('Secret/shop/db-pasword')).toEqual({ state: 'missing', similar: ['db-password'] });
      // A large cache keeps its index (and what it found) for a while: the gone name is filtered out.
      source.delete('Secret/shop/db-password');
      expect(caches.lookup('Secret/shop/db-pasword')).toEqual({ state: 'missing', similar: [] });
    } finally {
      await caches.stop();
      await source.stop();
    }
  });
});

describe('ReferentCaches: a failing watch', () => {
  it('answers unknown while the watch fails, and from the cache again once it recovers', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    source.apply(secret('db-password'));
    const caches = new ReferentCaches({ source });
    try {
      caches.prime(['Secret']);
      expect(caches.lookup('Secret/shop/db-password').state).toBe('found');
      source.fail('Secret', { reason: 'ServerError', message: 'etcd is down' });
      expect(caches.lookup('Secret/shop/db-password')).toEqual({ state: 'unknown' });
      expect(caches.lookup('Secret/shop/db-pasword')).toEqual({ state: 'unknown' });
      expect(caches.isPrimed('Secret')).toBe(false);
      source.recover('Secret');
      expect(caches.lookup('Secret/shop/db-password').state).toBe('found');
      expect(caches.lookup('Secret/shop/db-pasword')).toEqual({ state: 'missing', similar: ['db-password'] });
      expect(caches.isPrimed('Secret')).toBe(true);
    } finally {
      await caches.stop();
      await source.stop();
    }
  });

  it('answers unknown when the shared watch it joins was already failing', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    source.apply(secret('db-password'));
    // The engine watches Secrets first, and that watch fails before the admission check reads the kind.
    const engine = source.acquire({ group: '', kind: 'Secret' }, () => {});
    source.fail('Secret', { reason: 'ServerError', message: 'etcd is down' });
    const caches = new ReferentCaches({ source });
    try {
      expect(caches.lookup('Secret/shop/db-password')).toEqual({ state: 'unknown' });
      source.recover('Secret');
      expect(caches.lookup('Secret/shop/db-password').state).toBe('found');
    } finally {
      await caches.stop();
      await engine.release();
      await source.stop();
    }
  });
});
