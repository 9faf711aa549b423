import { afterEach, describe, expect, it } from 'vitest';
import { ChangeLog } from '@/lib/changelog';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { CONFIGMAP, DATABASE, FakeApiServer } from './fake-apiserver';
import { LogCapture, until } from './helpers';

let server: FakeApiServer | undefined;
let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  await server?.stop();
  manager = server = undefined;
});

describe('a watch the server accepts and fails in-stream, seen through the change log', () => {
  it('is one WatchError per kind, however many times it is retried, and no WatchRecovered', async () => {
    server = await FakeApiServer.start();
    server.create(CONFIGMAP, 'web', { namespace: 'shop' });
    server.create(DATABASE, 'orders', { namespace: 'shop' });
    const client = KubeClient.fromKubeconfig(server.kubeconfig());
    manager = new Manager({
      source: new SharedInformerPool({
        client,
        logger: new LogCapture(),
        reflector: { watchList: false, backoff: { initialMs: 20, maxMs: 320 }, random: () => 0 },
      }),
      logger: new LogCapture(),
      statsIntervalMs: 0,
      changelog: new ChangeLog(),
    });
    const resolved: string[] = [];
    manager.addController({
      name: 'web',
      for: { group: '', kind: 'ConfigMap', namespace: 'shop' },
      reconcile: (ctx) => {
        const r = ctx.resolve('Database.demo.refwatch.dev/shop/orders', 'spec.databaseRef');
        if (r.state === 'Ready') resolved.push(ctx.key);
      },
    });
    manager.start();
    await until(() => resolved.length > 0, 'the reference resolved');

    server.failWatchesInStream = 500;
    server.closeWatches();
    const dbWatches = () =>
      server!.requests.filter((q) => q.path.endsWith('/databases') && q.query.get('watch') === 'true').length;
    const before = dbWatches();
    await until(() => dbWatches() >= before + 6, 'six failed Database watches', 15_000);

    const events = manager.changelog.snapshot({ entities: ['event'] }).entities.event!;
    const watchEvents = events.filter((e) => e.type === 'WatchError' || e.type === 'WatchRecovered');
    expect(watchEvents.map((e) => `${e.type} ${e.kind}`).sort()).toEqual(['WatchError Database.demo.refwatch.dev']);
  });
});
