import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeLog } from '../../lib/changelog';
import type { ReferenceEntity, ReferentEntity, ReferrerEntity } from '../../lib/changelog/entities';
import { HistoryRecorder } from '../../server/history/recorder';
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE, migrations } from '../../server/history/schema';
import { HistoryStore, type HistoryTarget } from '../../server/history/store';
import { startPostgres, type TestPostgres } from '../setup/postgres';

/**
 * The history suite, run against both backends: SQLite in a temp dir and a
 * real PostgreSQL started by tests/setup/postgres.ts.
 */
let postgres: TestPostgres | undefined;
let skipped: string | undefined;
const dir = mkdtempSync(join(tmpdir(), 'refwatch-history-'));

beforeAll(async () => {
  const r = await startPostgres();
  if ('skipped' in r) {
    skipped = r.skipped;
    console.warn(`SKIPPED: history on PostgreSQL: ${r.skipped}`);
  } else postgres = r;
}, 120_000);

afterAll(() => {
  postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** A target of its own per test: a new SQLite file, or a new PostgreSQL schema-free database of its own cluster. */
function targetFor(backend: 'sqlite' | 'postgres'): HistoryTarget {
  if (backend === 'sqlite') return { dialect: 'sqlite', path: join(dir, `history-${++n}.db`) };
  return { dialect: 'postgres', url: postgres!.url };
}

/** ownTarget is a target no other test uses: on PostgreSQL, a new database named `name`. */
async function ownTarget(backend: 'sqlite' | 'postgres', name: string): Promise<HistoryTarget> {
  if (backend === 'sqlite') return targetFor(backend);
  const admin = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgres!.url }) }),
  });
  await sql`create database ${sql.id(name)}`.execute(admin);
  await admin.destroy();
  return { dialect: 'postgres', url: postgres!.url.replace(/\/refwatch$/, `/${name}`) };
}

const REFERRER = 'App.demo.refwatch.dev/shop/web';
const SECRET = 'Secret/shop/db-password';

function referrer(state: ReferrerEntity['state'], since: number, reason?: string): ReferrerEntity {
  const v: ReferrerEntity = {
    id: `watch|${REFERRER}`,
    key: REFERRER,
    controller: 'watch',
    kind: 'App.demo.refwatch.dev',
    namespace: 'shop',
    state,
    since,
    references: 1,
    reconciles: 1,
  };
  if (reason) v.reason = reason;
  return v;
}

function referent(
  state: ReferentEntity['state'],
  changedAt: number,
  extra: Partial<ReferentEntity> = {},
): ReferentEntity {
  return { id: SECRET, key: SECRET, kind: 'Secret', namespace: 'shop', state, referencedBy: 1, changedAt, ...extra };
}

const reference: ReferenceEntity = {
  id: `watch|${REFERRER}|${SECRET}|spec.secretRef`,
  controller: 'watch',
  referrer: REFERRER,
  referent: SECRET,
  fieldPath: 'spec.secretRef',
  count: 1,
  kind: 'Secret',
  namespace: 'shop',
};

describe.each(['sqlite', 'postgres'] as const)('history on %s', (backend) => {
  const cluster = () => `test-${backend}-${++n}`;
  const available = () => backend === 'sqlite' || postgres !== undefined;

  it('stores transitions and reads one object timeline with its referents interleaved, page by page', async ({
    skip,
  }) => {
    if (!available()) return skip(skipped);
    const store = await HistoryStore.open(targetFor(backend), { cluster: cluster() });
    try {
      await store.write([
        {
          at: 1000,
          type: 'reference',
          object: REFERRER,
          namespace: 'shop',
          state: 'Added',
          related: SECRET,
          controller: 'watch',
        },
        {
          at: 1001,
          type: 'referent',
          object: SECRET,
          namespace: 'shop',
          state: 'Ready',
          resourceVersion: '7',
          manager: 'helm',
        },
        { at: 1002, type: 'referrer', object: REFERRER, namespace: 'shop', state: 'Resolved', controller: 'watch' },
        { at: 1003, type: 'referent', object: 'Secret/other/x', namespace: 'other', state: 'Ready' },
        {
          at: 2000,
          type: 'referent',
          object: SECRET,
          namespace: 'shop',
          state: 'NotFound',
          manager: 'kubectl-client-side-apply',
        },
        {
          at: 2001,
          type: 'referrer',
          object: REFERRER,
          namespace: 'shop',
          state: 'NotFound',
          reason: 'NotFound',
          related: SECRET,
          controller: 'watch',
        },
      ]);
      const all = await store.timeline({ object: REFERRER, limit: 100 });
      expect(all.transitions.map((t) => `${t.at} ${t.object} ${t.state}`)).toEqual([
        `1000 ${REFERRER} Added`,
        `1001 ${SECRET} Ready`,
        `1002 ${REFERRER} Resolved`,
        `2000 ${SECRET} NotFound`,
        `2001 ${REFERRER} NotFound`,
      ]);
      expect(all.transitions[1]).toMatchObject({ resourceVersion: '7', manager: 'helm', namespace: 'shop' });
      expect(all.transitions[4]).toMatchObject({ related: SECRET, reason: 'NotFound', controller: 'watch' });
      expect(all.next).toBeUndefined();

      const first = await store.timeline({ object: REFERRER, limit: 2 });
      expect(first.transitions.map((t) => t.at)).toEqual([1000, 1001]);
      const second = await store.timeline({ object: REFERRER, limit: 2, cursor: first.next! });
      expect(second.transitions.map((t) => t.at)).toEqual([1002, 2000]);
      const third = await store.timeline({ object: REFERRER, limit: 2, cursor: second.next! });
      expect(third.transitions.map((t) => t.at)).toEqual([2001]);
      expect(third.next).toBeUndefined();

      const window = await store.timeline({ object: REFERRER, since: 1001, until: 2000, limit: 100 });
      expect(window.transitions.map((t) => t.at)).toEqual([1001, 1002, 2000]);
      const other = await store.timeline({ namespace: 'other', limit: 100 });
      expect(other.transitions.map((t) => t.object)).toEqual(['Secret/other/x']);
      expect((await store.timeline({ object: 'Secret/none/x', limit: 10 })).transitions).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("reads the last state of everything at a past instant, for the dashboard's view of then", async ({ skip }) => {
    if (!available()) return skip(skipped);
    const store = await HistoryStore.open(targetFor(backend), { cluster: cluster() });
    try {
      const ref = {
        type: 'reference' as const,
        object: REFERRER,
        namespace: 'shop',
        related: SECRET,
        controller: 'watch',
      };
      await store.write([
        { ...ref, at: 1000, state: 'Added', message: 'spec.secretRef' },
        { at: 1001, type: 'referent', object: SECRET, namespace: 'shop', state: 'NotFound' },
        {
          at: 1002,
          type: 'referrer',
          object: REFERRER,
          namespace: 'shop',
          state: 'NotFound',
          reason: 'NotFound',
          related: SECRET,
          controller: 'watch',
        },
        { at: 1003, type: 'referent', object: 'Secret/other/x', namespace: 'other', state: 'Ready' },
        { at: 2000, type: 'referent', object: SECRET, namespace: 'shop', state: 'Ready', manager: 'helm' },
        { at: 2001, type: 'referrer', object: REFERRER, namespace: 'shop', state: 'Resolved', controller: 'watch' },
        { ...ref, at: 3000, state: 'Removed' },
      ]);
      const states = async (at: number, namespace?: string) =>
        [...(await store.lastStates({ at, ...(namespace ? { namespace } : {}) })).values()]
          .sort((a, b) => a.id - b.id)
          .map((t) => `${t.type} ${t.object} ${t.state}${t.related ? ` ${t.related}` : ''}`);
      expect(await states(999)).toEqual([]);
      expect(await states(1500)).toEqual([
        `reference ${REFERRER} Added ${SECRET}`,
        `referent ${SECRET} NotFound`,
        `referrer ${REFERRER} NotFound ${SECRET}`,
        'referent Secret/other/x Ready',
      ]);
      expect(await states(1500, 'shop')).toEqual([
        `reference ${REFERRER} Added ${SECRET}`,
        `referent ${SECRET} NotFound`,
        `referrer ${REFERRER} NotFound ${SECRET}`,
      ]);
      expect(await states(2500, 'shop')).toEqual([
        `reference ${REFERRER} Added ${SECRET}`,
        `referent ${SECRET} Ready`,
        `referrer ${REFERRER} Resolved`,
      ]);
      expect(await states(3000, 'shop')).toEqual([
        `referent ${SECRET} Ready`,
        `referrer ${REFERRER} Resolved`,
        `reference ${REFERRER} Removed ${SECRET}`,
      ]);
    } finally {
      await store.close();
    }
  });

  it('keeps clusters apart in one database', async ({ skip }) => {
    if (!available()) return skip(skipped);
    const target = targetFor(backend);
    const a = await HistoryStore.open(target, { cluster: cluster() });
    const b = await HistoryStore.open(target, { cluster: cluster() });
    try {
      await a.write([{ at: 1, type: 'referent', object: SECRET, namespace: 'shop', state: 'Ready' }]);
      await b.write([{ at: 2, type: 'referent', object: SECRET, namespace: 'shop', state: 'NotFound' }]);
      expect((await a.timeline({ object: SECRET, limit: 10 })).transitions.map((t) => t.state)).toEqual(['Ready']);
      expect((await b.timeline({ object: SECRET, limit: 10 })).transitions.map((t) => t.state)).toEqual(['NotFound']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('refuses a database whose schema is newer than this binary, naming it and what to do', async ({ skip }) => {
    if (!available()) return skip(skipped);
    // A database of its own, so the newer migration does not reach the other tests.
    const target = await ownTarget(backend, 'newer');
    const store = await HistoryStore.open(target, { cluster: cluster() });
    await store.close();
    const raw =
      backend === 'sqlite'
        ? new (await import('better-sqlite3')).default((target as { path: string }).path)
        : undefined;
    if (raw) {
      raw.prepare(`insert into refwatch_migration (name, timestamp) values ('9999_future', '2030-01-01')`).run();
      raw.close();
    } else {
      const db = new Kysely<unknown>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: (target as { url: string }).url }) }),
      });
      await sql`insert into refwatch_migration (name, timestamp) values ('9999_future', '2030-01-01')`.execute(db);
      await db.destroy();
    }
    await expect(HistoryStore.open(target, { cluster: cluster() })).rejects.toThrow(
      /has schema 9999_future, newer than this refwatch knows \(up to 0002_states\); upgrade refwatch/,
    );
  });

  it('migrates a history written by the first schema: every transition reads back as it was, and writes go on', async ({
    skip,
  }) => {
    if (!available()) return skip(skipped);
    // A database of its own at the first schema: the shared one is already at the latest.
    const target = await ownTarget(backend, 'first_schema');
    const db = new Kysely<unknown>({
      dialect:
        target.dialect === 'postgres'
          ? new PostgresDialect({ pool: new pg.Pool({ connectionString: target.url }) })
          : new SqliteDialect({ database: new Database(target.path) }),
    });
    const first = migrations(backend)['0001_transitions']!;
    const { error } = await new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve({ '0001_transitions': first }) },
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
    }).migrateToLatest();
    expect(error).toBeUndefined();
    const id = cluster();
    const objectId = async (key: string) =>
      (
        await sql<{
          id: number;
        }>`insert into objects (cluster, key, namespace) values (${id}, ${key}, 'shop') returning id`.execute(db)
      ).rows[0]!.id;
    const web = await objectId(REFERRER);
    const secret = await objectId(SECRET);
    const rows: [
      number,
      number,
      string,
      string,
      string | null,
      string | null,
      number | null,
      string | null,
      string | null,
      string | null,
    ][] = [
      [secret, 1_000, 'referent', 'Ready', null, null, null, '7', 'helm', null],
      [web, 1_001, 'reference', 'Added', null, null, secret, null, null, 'watch'],
      [secret, 2_000, 'referent', 'NotFound', null, null, null, '9', 'kubectl-client-side-apply', null],
      [web, 2_001, 'referrer', 'Waiting', 'NotFound', 'Secret shop/db-password not found', secret, null, null, 'watch'],
      [secret, 3_000, 'referent', 'Ready', null, null, null, '12', 'helm', null],
      [web, 3_001, 'referrer', 'Resolved', null, null, null, null, null, 'watch'],
    ];
    for (const r of rows)
      await sql`insert into transitions (object_id, at, type, state, reason, message, related_id, resource_version, manager, controller)
        values (${sql.join(r)})`.execute(db);
    await db.destroy();

    const lines: string[] = [];
    const store = await HistoryStore.open(target, { cluster: id, log: (l) => lines.push(l) });
    try {
      expect(lines).toEqual([expect.stringMatching(/^refwatch: history: migrating .* to 0002_states; /)]);
      const keys = new Map([
        [web, REFERRER],
        [secret, SECRET],
      ]);
      const expected = rows.map(
        ([object, at, type, state, reason, message, related, resourceVersion, manager, controller]) => ({
          at,
          type,
          object: keys.get(object),
          namespace: 'shop',
          state,
          ...(reason !== null && { reason }),
          ...(message !== null && { message }),
          ...(related !== null && { related: keys.get(related) }),
          ...(resourceVersion !== null && { resourceVersion }),
          ...(manager !== null && { manager }),
          ...(controller !== null && { controller }),
        }),
      );
      const read = async () =>
        (await store.timeline({ object: REFERRER, limit: 100 })).transitions.map(({ id: _, ...t }) => t);
      expect(await read()).toEqual(expected);
      expect([...(await store.lastStates()).values()].map((t) => `${t.type} ${t.object} ${t.state}`).sort()).toEqual([
        `reference ${REFERRER} Added`,
        `referent ${SECRET} Ready`,
        `referrer ${REFERRER} Resolved`,
      ]);
      const next = {
        at: 4_000,
        type: 'referent' as const,
        object: SECRET,
        namespace: 'shop',
        state: 'NotFound',
        manager: 'helm',
        resourceVersion: '13',
      };
      await store.write([next]);
      expect(await read()).toEqual([...expected, next]);
    } finally {
      await store.close();
    }
  });

  it('records transitions, not puts, and after a restart says what changed while refwatch was down; a stuck since continues', async ({
    skip,
  }) => {
    if (!available()) return skip(skipped);
    const target = targetFor(backend);
    const id = cluster();
    let now = 10_000;
    const lines: string[] = [];
    const recorder = (log: ChangeLog) =>
      new HistoryRecorder({
        changelog: log,
        open: () => HistoryStore.open(target, { cluster: id }),
        now: () => now,
        log: (l) => lines.push(l),
      });

    const log1 = new ChangeLog();
    const r1 = recorder(log1);
    await r1.start();
    log1.put('reference', reference.id, reference);
    log1.put('referent', SECRET, referent('NotPrimed', now));
    log1.put('referent', SECRET, referent('Ready', now, { resourceVersion: '5', manager: 'helm' }));
    log1.put('referent', SECRET, {
      ...referent('Ready', now, { resourceVersion: '5', manager: 'helm' }),
      referencedBy: 2,
    });
    log1.put('referrer', `watch|${REFERRER}`, referrer('Waiting', now, `NotReady: ${SECRET}`));
    log1.put('referrer', `watch|${REFERRER}`, { ...referrer('Waiting', now, `NotReady: ${SECRET}`), reconciles: 5 });
    await r1.flush();
    expect(r1.status()).toMatchObject({ state: 'up', written: 3, dropped: 0 });
    now = 14_000;
    await r1.stop();

    // Down: the Secret is deleted; the referrer stays Waiting.
    now = 60_000;
    const log2 = new ChangeLog();
    const r2 = recorder(log2);
    await r2.start();
    log2.put('reference', reference.id, reference);
    log2.put('referent', SECRET, referent('NotFound', now, { message: `${SECRET} not found` }));
    log2.put('referrer', `watch|${REFERRER}`, referrer('Waiting', now, `NotReady: ${SECRET}`));
    await r2.flush();
    expect(r2.since('watch', REFERRER)).toBe(10_000);
    // The change log itself carries the since from before the restart, so every reader shows the stuck age going on.
    await Promise.resolve();
    expect(log2.get('referrer', `watch|${REFERRER}`)!.since).toBe(10_000);
    const page = await r2.timeline({ object: REFERRER, limit: 100 });
    await r2.stop();
    expect(page.transitions.map((t) => `${t.at} ${t.type} ${t.state}`)).toEqual([
      '10000 reference Added',
      '10000 referent Ready',
      '10000 referrer Waiting',
      '60000 referent NotFound',
    ]);
    expect(page.transitions[3]!.message).toBe(
      `${SECRET} was deleted while refwatch was down (last seen 00:00:14): ${SECRET} not found`,
    );
    expect(page.transitions[3]!.reason).toBe('WhileDown');
  });

  it('prunes transitions older than the retention and reports the figures', async ({ skip }) => {
    if (!available()) return skip(skipped);
    const target = targetFor(backend);
    const id = cluster();
    const log = new ChangeLog();
    let now = 1_000_000;
    const r = new HistoryRecorder({
      changelog: log,
      open: () => HistoryStore.open(target, { cluster: id }),
      now: () => now,
      retentionMs: 60_000,
      pruneIntervalMs: 3_600_000,
    });
    await r.start();
    for (let i = 0; i < 10; i++) log.put('referent', SECRET, referent(i % 2 ? 'Ready' : 'NotReady', now + i));
    await r.flush();
    now += 120_000;
    log.put('referent', SECRET, referent('NotFound', now));
    await r.flush();
    await r.prune();
    expect(r.status()).toMatchObject({ pruned: 10, rows: 1, oldestAt: now });
    expect(r.status().bytes).toBeGreaterThan(0);
    await r.stop();
  });
});

describe('history when PostgreSQL is killed mid-run', () => {
  it('drops and counts while it is down, keeps readers told, and writes again once it is back', async ({ skip }) => {
    if (!postgres) return skip(skipped);
    const log = new ChangeLog();
    const lines: string[] = [];
    const r = new HistoryRecorder({
      changelog: log,
      open: () => HistoryStore.open({ dialect: 'postgres', url: postgres!.url }, { cluster: 'killed' }),
      reconnectMs: { initial: 100, max: 500 },
      log: (l) => lines.push(l),
    });
    await r.start();
    let i = 0;
    const flap = () => log.put('referent', SECRET, referent(i++ % 2 ? 'Ready' : 'NotReady', i));
    flap();
    await r.flush();
    expect(r.status()).toMatchObject({ state: 'up', written: 1 });
    postgres.kill();
    try {
      flap();
      await r.flush();
      expect(r.status()).toMatchObject({ state: 'down', dropped: 1 });
      expect(lines.join('\n')).toMatch(/failed: .*live results are unaffected, transitions are dropped and counted/);
      await expect(r.timeline({ object: SECRET, limit: 10 })).rejects.toThrow(/history is unavailable/);
    } finally {
      postgres.restart();
    }
    await expect.poll(() => r.status().state, { timeout: 30_000 }).toBe('up');
    flap();
    await r.flush();
    expect(r.status()).toMatchObject({ state: 'up', written: 2, dropped: 1 });
    expect(lines.join('\n')).toMatch(/is back; writing again \(1 transitions dropped while it was down\)/);
    const states = (await r.timeline({ object: SECRET, limit: 10 })).transitions.map((t) => t.state);
    expect(states).toHaveLength(2);
    await r.stop();
  });
});
