import { afterEach, describe, expect, it, vi } from 'vitest';
import { LagProbe } from '@/bench/peer/lag-probe';
import type { KubeObject } from '@/lib/model';

const GROUP = 'demo.refwatch.dev';
const referent = (kind: string, name: string, readyAt: number) => ({
  referent: `${kind}.${GROUP}/ns/${name}`,
  object: { status: { readyAt: new Date(readyAt).toISOString() } },
});
const object = (kind: string, name: string) =>
  ({ apiVersion: `${GROUP}/v1alpha1`, kind, metadata: { name, namespace: 'ns' } }) as KubeObject;

describe('LagProbe', () => {
  afterEach(() => vi.useRealTimers());

  it('splits a late resolution at the arrival of its last referent, and is silent about a prompt one', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.useFakeTimers({ now: 10_000 });
    const probe = new LagProbe(100);
    probe.transform(object('Database', 'db-1')); // arrives at 10,000
    probe.transform(object('Cache', 'c-1'));
    vi.setSystemTime(10_150);
    probe.resolving([referent('Database', 'db-1', 9_900), referent('Cache', 'c-1', 9_800)], Date.now());
    probe.resolving([referent('Database', 'db-1', 10_100), referent('Cache', 'c-1', 9_800)], Date.now());
    expect(errors.mock.calls.map((c) => c[0])).toEqual([
      'late 10150 Database/db-1: 250 ms = upstream 100 + inside 150; 0 status writes in flight',
    ]);
    errors.mockRestore();
  });

  it('counts the status writes in flight and names a slow one', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.useFakeTimers({ now: 0 });
    const probe = new LagProbe(100);
    let finish!: () => void;
    const slow = probe.write(() => new Promise<void>((r) => (finish = r)));
    vi.setSystemTime(10);
    probe.resolving([referent('Database', 'db-2', -200)], Date.now());
    vi.setSystemTime(300);
    finish();
    await slow;
    expect(errors.mock.calls.map((c) => c[0])).toEqual([
      'late 10 Database/db-2: 210 ms = upstream NaN + inside NaN; 1 status writes in flight',
      'slow status write 0: 300 ms; 0 others in flight',
    ]);
    errors.mockRestore();
  });
});
