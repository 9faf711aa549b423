import { afterEach, describe, expect, it } from 'vitest';
import {
  Manager,
  MemoryInformerSource,
  conditionReadiness,
  defaultReadiness,
  existsReadiness,
  needsMetadataOnly,
  readsMetadataOnly,
  type AcquireOptions,
  type InformerHandler,
  type ManagerOptions,
  type WatchTarget,
} from '@/lib/engine';
import { kindKey } from '@/lib/model';

/** RecordingSource is a MemoryInformerSource that remembers what each acquire asked for. */
class RecordingSource extends MemoryInformerSource {
  readonly asked = new Map<string, boolean>();
  override acquire(target: WatchTarget, handler: InformerHandler, opts?: AcquireOptions) {
    this.asked.set(kindKey(target), opts?.metadataOnly === true);
    return super.acquire(target, handler);
  }
}

const managers: Manager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

/** askedFor references each kind once and returns what the reference controllers asked the source for. */
async function askedFor(kinds: string[], opts: Omit<ManagerOptions, 'source'> = {}): Promise<Record<string, boolean>> {
  const source = new RecordingSource();
  const manager = new Manager({ source, statsIntervalMs: 0, ...opts });
  managers.push(manager);
  manager.start();
  kinds.forEach((kind, i) =>
    manager.registry.setReferences('test', `ConfigMap/shop/r${i}`, [
      { referent: `${kind}/shop/x`, fieldPath: 'spec.ref' },
    ]),
  );
  await Promise.resolve();
  return Object.fromEntries(kinds.map((k) => [k, source.asked.get(k) ?? false]));
}

describe('metadata-only referent kinds', () => {
  it('are Secret, ConfigMap and ServiceAccount by default, and kinds judged by existence', async () => {
    expect(await askedFor(['Secret', 'ConfigMap', 'ServiceAccount', 'Service', 'Database.demo.refwatch.dev'])).toEqual({
      Secret: true,
      ConfigMap: true,
      ServiceAccount: true,
      Service: false,
      'Database.demo.refwatch.dev': false,
    });
    const readiness = (kind: string) =>
      kind === 'Service'
        ? existsReadiness
        : kind === 'Database.demo.refwatch.dev'
          ? conditionReadiness('Ready')
          : undefined;
    expect(await askedFor(['Service', 'Database.demo.refwatch.dev'], { readiness })).toEqual({
      Service: true,
      'Database.demo.refwatch.dev': false,
    });
  });

  it('follow the readiness predicate: one that reads more than metadata keeps whole objects', async () => {
    const labelled = readsMetadataOnly((o) => ({ ready: o.metadata.labels?.ready === 'true' }));
    const readsData = (o: { data?: unknown }) => ({ ready: o.data !== undefined });
    expect(
      await askedFor(['Secret', 'Cache.demo.refwatch.dev'], {
        readiness: (k) => (k === 'Secret' ? readsData : labelled),
      }),
    ).toEqual({
      Secret: false,
      'Cache.demo.refwatch.dev': true,
    });
    expect(needsMetadataOnly('Secret', defaultReadiness)).toBe(true);
    expect(needsMetadataOnly('Deployment.apps', defaultReadiness)).toBe(false);
    expect(labelled({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x', labels: { ready: 'true' } } })).toEqual({
      ready: true,
    });
  });

  it('can be chosen per kind, over the default', async () => {
    const metadataOnly = (kind: string) => (kind === 'Secret' ? false : kind === 'Deployment.apps' ? true : undefined);
    expect(await askedFor(['Secret', 'Deployment.apps', 'ConfigMap'], { metadataOnly })).toEqual({
      Secret: false,
      'Deployment.apps': true,
      ConfigMap: true,
    });
  });
});
