import { describe, expect, it } from 'vitest';
import {
  ChangeLog,
  decodeDelta,
  decodeSnapshot,
  type Delta,
  type ReferenceEntity,
  type ReferentEntity,
  type ReferrerEntity,
  type Snapshot,
} from '@/lib/changelog';
import { sseStream, type SseOptions } from '@/server/http/sse';
import { ScopeView, toScope, type ScopeQuery } from '@/server/scope';
import { buildSnapshot } from '@/server/snapshot';
import { ReferrerSummary } from '@/server/summary';

const cluster = { mode: 'embedded' as const, server: 'http://127.0.0.1:1', reachable: true };
const T0 = Date.now();

function app(ns: string, name: string, state: ReferrerEntity['state'] = 'Waiting', since = T0): ReferrerEntity {
  const key = `App.demo.refwatch.dev/${ns}/${name}`;
  return {
    id: `apps|${key}`,
    key,
    controller: 'apps',
    kind: 'App.demo.refwatch.dev',
    namespace: ns,
    state,
    since,
    references: 1,
    reconciles: 1,
  };
}
function db(ns: string, name: string, state: ReferentEntity['state'] = 'NotReady'): ReferentEntity {
  const key = `Database.demo.refwatch.dev/${ns}/${name}`;
  return { id: key, key, kind: 'Database.demo.refwatch.dev', namespace: ns, state, referencedBy: 1, changedAt: 0 };
}
function ref(from: ReferrerEntity, to: ReferentEntity): ReferenceEntity {
  return {
    id: `apps|${from.key}|${to.key}|spec.databaseRef`,
    controller: 'apps',
    referrer: from.key,
    referent: to.key,
    fieldPath: 'spec.databaseRef',
    count: 1,
    kind: to.kind,
    namespace: from.namespace,
  };
}

/** The cluster: shop/web → shop/orders, billing/pay → billing/ledger, billing/old (stuck since long ago). */
function fixture() {
  const log = new ChangeLog();
  const summary = new ReferrerSummary(log, { stuckThresholdMs: 30_000 });
  const put = (entity: 'referrer' | 'referent' | 'reference', v: ReferrerEntity | ReferentEntity | ReferenceEntity) =>
    log.put(entity, v.id, v as never);
  const web = app('shop', 'web');
  const orders = db('shop', 'orders');
  const pay = app('billing', 'pay');
  const ledger = db('billing', 'ledger');
  const old = app('billing', 'old', 'NotFound', T0 - 3_600_000);
  for (const r of [web, pay, old]) put('referrer', r);
  for (const r of [orders, ledger]) put('referent', r);
  put('reference', ref(web, orders));
  put('reference', ref(pay, ledger));
  put('reference', ref(old, ledger));
  return { log, summary, put, web, orders, pay, ledger, old };
}

/** Reads SSE messages until `count` of them have arrived or the stream pauses; snapshots and deltas decoded from the lean wire format. */
async function read(stream: ReadableStream<Uint8Array>, count: number): Promise<{ event: string; data: unknown }[]> {
  const reader = stream.getReader();
  const out: { event: string; data: unknown }[] = [];
  let text = '';
  while (out.length < count) {
    const r = await Promise.race([
      reader.read(),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 300)),
    ]);
    if (r === undefined || r.done) break;
    text += new TextDecoder().decode(r.value);
    let end: number;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      const raw: unknown = data ? JSON.parse(data) : undefined;
      if (event)
        out.push({
          event,
          data: event === 'snapshot' ? decodeSnapshot(raw) : event === 'delta' ? decodeDelta(raw) : raw,
        });
    }
  }
  reader.releaseLock();
  return out;
}

function open(f: ReturnType<typeof fixture>, q: ScopeQuery, extra: Partial<SseOptions> = {}) {
  const scope = toScope(q, f.summary);
  const view = scope.expands ? new ScopeView(f.log) : undefined;
  const abort = new AbortController();
  const stream = sseStream({
    changelog: f.log,
    snapshot: () => {
      const s = buildSnapshot({ changelog: f.log }, cluster, [], scope.filter);
      return view ? view.snapshot(s) : s;
    },
    filter: scope.filter,
    ...(view ? { admit: (c) => view.admit(c) } : {}),
    flushDelayMs: 1,
    signal: abort.signal,
    ...extra,
  });
  return { stream, close: () => abort.abort() };
}

const keysOf = (s: Snapshot) => [...s.referrers, ...s.referents].map((e) => e.key).sort();
const changed = (d: Delta) => d.changes.map((c) => `${c.entity} ${c.id}${c.removed ? ' removed' : ''}`);

describe('scoped streams', () => {
  it('a namespace stream sends only the changes inside it', async () => {
    const f = fixture();
    const { stream, close } = open(f, { namespace: 'shop' });
    const [snap] = await read(stream, 1);
    expect(keysOf(snap!.data as Snapshot)).toEqual([f.web.key, f.orders.key]);
    f.put('referent', db('billing', 'ledger', 'Ready'));
    f.put('referent', db('shop', 'orders', 'Ready'));
    const [delta] = await read(stream, 1);
    expect(changed(delta!.data as Delta)).toEqual([`referent ${f.orders.id}`]);
    close();
  });

  it('a namespace stream holds the cluster-scoped referents its references name, and follows them', async () => {
    const f = fixture();
    const claim: ReferrerEntity = {
      ...app('shop', 'data'),
      id: 'rules/PersistentVolumeClaim|PersistentVolumeClaim/shop/data',
      key: 'PersistentVolumeClaim/shop/data',
      controller: 'rules/PersistentVolumeClaim',
      kind: 'PersistentVolumeClaim',
      state: 'NotFound',
    };
    const key = 'StorageClass.storage.k8s.io//fast';
    const fast = (state: ReferentEntity['state']): ReferentEntity => ({
      id: key,
      key,
      kind: 'StorageClass.storage.k8s.io',
      namespace: '',
      state,
      referencedBy: 1,
      changedAt: 0,
    });
    f.put('referrer', claim);
    f.put('referent', fast('NotFound'));
    f.put('reference', {
      id: `${claim.controller}|${claim.key}|${key}|spec.storageClassName`,
      controller: claim.controller,
      referrer: claim.key,
      referent: key,
      fieldPath: 'spec.storageClassName',
      count: 1,
      kind: 'StorageClass.storage.k8s.io',
      namespace: 'shop',
    });
    const { stream, close } = open(f, { namespace: 'shop' });
    const [snap] = await read(stream, 1);
    // Without it the dashboard draws the StorageClass as "not observed yet" while explain says NotFound.
    expect((snap!.data as Snapshot).referents.find((r) => r.key === key)).toMatchObject({ state: 'NotFound' });
    f.put('referent', fast('Ready'));
    f.put('referent', db('billing', 'ledger', 'Ready'));
    const [delta] = await read(stream, 1);
    expect(changed(delta!.data as Delta)).toEqual([`referent ${key}`]);
    expect((delta!.data as Delta).changes[0]).toMatchObject({ removed: false, value: { state: 'Ready' } });
    close();
  });

  it('an object stream holds the object, its references and their other ends, and follows an end outside the filter', async () => {
    const f = fixture();
    const { stream, close } = open(f, { object: f.ledger.key });
    const [snap] = await read(stream, 1);
    expect(keysOf(snap!.data as Snapshot)).toEqual([f.old.key, f.pay.key, f.ledger.key].sort());
    // pay is the other end: outside the filter, still held, so its new state comes; web is not.
    f.put('referrer', app('billing', 'pay', 'Resolved'));
    f.put('referrer', app('shop', 'web', 'Resolved'));
    const [delta] = await read(stream, 1);
    expect(changed(delta!.data as Delta)).toEqual([`referrer ${f.pay.id}`]);
    expect((delta!.data as Delta).changes[0]).toMatchObject({ removed: false, value: { state: 'Resolved' } });
    // A new reference to it brings its referrer along.
    const fresh = app('billing', 'fresh');
    f.put('referrer', fresh);
    f.put('reference', ref(fresh, f.ledger));
    const [next] = await read(stream, 1);
    expect(changed(next!.data as Delta)).toEqual([`reference ${ref(fresh, f.ledger).id}`, `referrer ${fresh.id}`]);
    close();
  });

  it('a stuck stream holds the stuck referrers with their referents, shows one resolve, and sends nothing else', async () => {
    const f = fixture();
    const { stream, close } = open(f, { stuck: '1' });
    const [snap] = await read(stream, 1);
    expect(keysOf(snap!.data as Snapshot)).toEqual([f.old.key, f.ledger.key].sort());
    f.put('referrer', app('shop', 'web', 'Resolved'));
    f.put('referrer', app('billing', 'old', 'Resolved'));
    const [delta] = await read(stream, 1);
    // Still the end of a reference the view holds: its new state, rather than a removal that would orphan the edge.
    expect(changed(delta!.data as Delta)).toEqual([`referrer ${f.old.id}`]);
    expect((delta!.data as Delta).changes[0]).toMatchObject({ value: { state: 'Resolved' } });
    close();
  });

  it('an overview stream sends the summary and no snapshot or deltas', async () => {
    const f = fixture();
    const listeners = new Set<(s: ReturnType<ReferrerSummary['summary']>) => void>();
    const { stream, close } = open(
      f,
      {},
      {
        overview: true,
        summary: {
          current: () => f.summary.summary(),
          subscribe: (l) => {
            listeners.add(l);
            return () => listeners.delete(l);
          },
        },
      },
    );
    const first = await read(stream, 2);
    expect(first.map((m) => m.event)).toEqual(['summary']);
    expect(first[0]!.data).toMatchObject({ totals: { referrers: 3, stuck: 1 }, stuckList: [{ key: f.old.key }] });
    f.put('referrer', app('billing', 'old', 'Resolved'));
    for (const l of listeners) l(f.summary.summary());
    const next = await read(stream, 2);
    expect(next.map((m) => m.event)).toEqual(['summary']);
    expect(next[0]!.data).toMatchObject({ totals: { stuck: 0 } });
    close();
    expect(listeners.size).toBe(0);
  });
});
