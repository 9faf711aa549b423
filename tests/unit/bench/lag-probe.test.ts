import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeferredLog, LagProbe } from '@/bench/peer/lag-probe';
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
    const lines: string[] = [];
    vi.useFakeTimers({ now: 10_000 });
    const probe = new LagProbe((l) => lines.push(l), 100);
    probe.transform(object('Database', 'db-1')); // arrives at 10,000
    probe.transform(object('Cache', 'c-1'));
    vi.setSystemTime(10_150);
    probe.resolving([referent('Database', 'db-1', 9_900), referent('Cache', 'c-1', 9_800)], Date.now());
    probe.resolving([referent('Database', 'db-1', 10_100), referent('Cache', 'c-1', 9_800)], Date.now());
    expect(lines).toEqual(['late 10150 Database/db-1: 250 ms = upstream 100 + inside 150; 0 status writes in flight']);
  });

  it('counts the status writes in flight and names a slow one', async () => {
    const lines: string[] = [];
    vi.useFakeTimers({ now: 0 });
    const probe = new LagProbe((l) => lines.push(l), 100);
    let finish!: () => void;
    const slow = probe.write(() => new Promise<void>((r) => (finish = r)));
    vi.setSystemTime(10);
    probe.resolving([referent('Database', 'db-2', -200)], Date.now());
    vi.setSystemTime(300);
    finish();
    await slow;
    expect(lines).toEqual([
      'late 10 Database/db-2: 210 ms = upstream NaN + inside NaN; 1 status writes in flight',
      'slow status write 0: 300 ms; 0 others in flight',
    ]);
  });
});

describe('DeferredLog', () => {
  it('writes nothing until flushed, then every line in order in one write, and nothing twice', () => {
    const writes: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const log = new DeferredLog();
    log.line('late 1 Cache/c-1: 120 ms');
    log.line('slow status write 2: 150 ms');
    expect(stderr).not.toHaveBeenCalled();
    log.flush((t) => writes.push(t));
    log.flush((t) => writes.push(t));
    expect(writes).toEqual(['late 1 Cache/c-1: 120 ms\nslow status write 2: 150 ms\n']);
    log.line('after');
    log.flush();
    expect(stderr).toHaveBeenCalledWith('after\n');
    stderr.mockRestore();
  });
});
