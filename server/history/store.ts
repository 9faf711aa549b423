import 'server-only';
import { mkdirSync, renameSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Compilable, type Insertable } from 'kysely';
import pg from 'pg';
import { RefwatchError } from '../../lib/model';
import {
  MIGRATION_LOCK_TABLE,
  MIGRATION_TABLE,
  appliedMigrations,
  migrationProvider,
  migrations,
  type Dialect,
  type HistoryTables,
  type Transition,
  type TransitionType,
} from './schema';
import { SqliteWriter } from './sqlite-writer';

export type { Transition } from './schema';

/** Where the history lives: a SQLite file, or a PostgreSQL database shared by replicas and clusters. */
export type HistoryTarget = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

export interface StoredTransition extends Transition {
  id: number;
}

export interface TimelineQuery {
  /** One object's timeline, with the transitions of every referent it named interleaved. */
  object?: string;
  /** Every transition of the objects in one namespace. */
  namespace?: string;
  since?: number;
  until?: number;
  limit: number;
  /** The `next` of the previous page: transitions after it. */
  cursor?: number;
}

export interface TimelinePage {
  transitions: StoredTransition[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  next?: number;
}

export interface HistoryStats {
  rows: number;
  /** Bytes the database uses (SQLite: pages in use; PostgreSQL: the tables and their indexes). */
  bytes: number;
  oldestAt?: number;
}

export interface OpenOptions {
  /** The cluster's identity: rows carry it, so one database can hold several clusters. */
  cluster: string;
  /** Where a moved-aside corrupt file and other notices are said. */
  log?: (line: string) => void;
}

/**
 * HistoryStore reads and writes the history through Kysely, one schema for
 * SQLite and PostgreSQL. It migrates at open and refuses a database whose
 * schema is newer than this binary. A SQLite file that is not a database, or
 * fails its integrity check, is moved aside and a fresh one started.
 */
export class HistoryStore {
  readonly dialect: Dialect;
  readonly cluster: string;
  readonly where: string;
  readonly #db: Kysely<HistoryTables>;
  readonly #sqlite: Database.Database | undefined;
  readonly #objectIds = new Map<string, number>();
  /** Keys and namespaces of object ids, for decoding reads: an object's key never changes. */
  readonly #objectKeys = new Map<number, { key: string; namespace: string }>();
  /** The `states` rows, by id and by stateOf's key: a few hundred, each read once. */
  readonly #states = new Map<number, StateColumns>();
  readonly #stateIds = new Map<string, number>();
  /** SQLite's prepared read statements, by their SQL. */
  readonly #statements = new Map<string, Database.Statement>();
  /** SQLite: the thread that writes; this connection migrates, reads and prunes. */
  #writer: SqliteWriter | undefined;
  /** PostgreSQL: the pool under Kysely, for reads whose rows come back as arrays. */
  #pool: pg.Pool | undefined;
  #closed = false;

  private constructor(
    db: Kysely<HistoryTables>,
    dialect: Dialect,
    cluster: string,
    where: string,
    sqlite?: Database.Database,
  ) {
    this.#db = db;
    this.dialect = dialect;
    this.cluster = cluster;
    this.where = where;
    this.#sqlite = sqlite;
  }

  static async open(target: HistoryTarget, opts: OpenOptions): Promise<HistoryStore> {
    let store: HistoryStore;
    if (target.dialect === 'sqlite') {
      const [db, sqlite] = sqliteDb(target.path, opts.log ?? console.warn);
      store = new HistoryStore(db, 'sqlite', opts.cluster, target.path, sqlite);
    } else {
      const pool = postgresPool(target.url);
      store = new HistoryStore(
        new Kysely<HistoryTables>({ dialect: new PostgresDialect({ pool }) }),
        'postgres',
        opts.cluster,
        redactUrl(target.url),
      );
      store.#pool = pool;
    }
    try {
      await store.#migrate(opts.log ?? console.warn);
      if (target.dialect === 'sqlite') store.#writer = new SqliteWriter(target.path);
    } catch (e) {
      await store.close();
      throw e;
    }
    return store;
  }

  async #migrate(log: (line: string) => void): Promise<void> {
    const db = this.#db as unknown as Kysely<unknown>;
    const known = Object.keys(migrations(this.dialect));
    const applied = await appliedMigrations(db);
    const unknown = applied.filter((m) => !known.includes(m));
    if (unknown.length > 0)
      throw new RefwatchError(
        'HistorySchemaNewer',
        `history database ${this.where} has schema ${unknown.join(', ')}, newer than this refwatch knows (up to ${known.at(-1)}); ` +
          'upgrade refwatch, or point --history at another database (or --history off)',
        { field: 'REFWATCH_HISTORY' },
      );
    const pending = known.filter((m) => !applied.includes(m));
    // A new database migrates in milliseconds; an existing one rewrites its transitions, which takes a while.
    if (applied.length > 0 && pending.length > 0)
      log(
        `refwatch: history: migrating ${this.where} to ${pending.join(', ')}; the history is read again once it is done`,
      );
    const migrator = new Migrator({
      db,
      provider: migrationProvider(this.dialect),
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
    });
    const { error } = await migrator.migrateToLatest();
    if (error)
      throw new RefwatchError(
        'HistoryMigration',
        `history database ${this.where}: migration failed: ${error instanceof Error ? error.message : String(error)}`,
        { field: 'REFWATCH_HISTORY', cause: error },
      );
  }

  /** write stores transitions in one database transaction (SQLite: on the writer thread). */
  async write(rows: readonly Transition[]): Promise<void> {
    if (rows.length === 0) return;
    if (this.#writer) return this.#writer.write(this.cluster, rows);
    // By hand rather than db.transaction(): SQLite rolls back by itself on some errors (SQLITE_FULL at commit),
    // the rollback that follows then fails, and the first error is the one to report.
    await this.#db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      try {
        await this.#insert(conn, rows);
        await sql`commit`.execute(conn);
      } catch (e) {
        await sql`rollback`.execute(conn).catch(() => {});
        // The rollback removed any object or state this write added; their ids must not be used again.
        this.#objectIds.clear();
        this.#stateIds.clear();
        throw e;
      }
    });
  }

  async #insert(tx: Kysely<HistoryTables>, rows: readonly Transition[]): Promise<void> {
    {
      const ids = await this.#ids(tx, rows);
      const states = await this.#stateIdsOf(tx, rows);
      // SQLite takes at most 32,766 bound values per statement; six per row.
      for (let i = 0; i < rows.length; i += 1000) {
        await tx
          .insertInto('transitions')
          .values(rows.slice(i, i + 1000).map((r) => transitionRow(r, ids, states)))
          .execute();
      }
    }
  }

  /** #stateIdsOf finds (or adds) the `states` row of every transition, keyed by stateOf. */
  async #stateIdsOf(tx: Kysely<HistoryTables>, rows: readonly Transition[]): Promise<Map<string, number>> {
    const missing = new Map<string, Insertable<HistoryTables['states']>>();
    for (const r of rows) {
      const key = stateOf(r);
      if (!this.#stateIds.has(key) && !missing.has(key))
        missing.set(key, {
          type: r.type,
          state: r.state,
          reason: r.reason ?? '',
          manager: r.manager ?? '',
          controller: r.controller ?? '',
        });
    }
    if (missing.size > 0) {
      await tx
        .insertInto('states')
        .values([...missing.values()])
        .onConflict((oc) => oc.columns(['type', 'state', 'reason', 'manager', 'controller']).doNothing())
        .execute();
      // The table is a vocabulary, small enough to read whole.
      for (const row of await tx.selectFrom('states').selectAll().execute()) this.#stateIds.set(stateOf(row), row.id);
    }
    return this.#stateIds;
  }

  /** #ids finds (or adds) the row of every object the transitions name. */
  async #ids(tx: Kysely<HistoryTables>, rows: readonly Transition[]): Promise<Map<string, number>> {
    const namespaces = new Map<string, string>();
    for (const r of rows) {
      if (!this.#objectIds.has(r.object)) namespaces.set(r.object, r.namespace);
      if (r.related !== undefined && !this.#objectIds.has(r.related)) namespaces.set(r.related, namespaceOf(r.related));
    }
    if (namespaces.size > 0) {
      const missing = [...namespaces.keys()];
      await tx
        .insertInto('objects')
        .values(missing.map((key) => ({ cluster: this.cluster, key, namespace: namespaces.get(key)! })))
        .onConflict((oc) => oc.columns(['cluster', 'key']).doNothing())
        .execute();
      for (let i = 0; i < missing.length; i += 500) {
        const found = await tx
          .selectFrom('objects')
          .select(['id', 'key'])
          .where('cluster', '=', this.cluster)
          .where('key', 'in', missing.slice(i, i + 500))
          .execute();
        for (const o of found) this.#objectIds.set(o.key, Number(o.id));
      }
    }
    return this.#objectIds;
  }

  /** timeline reads transitions oldest first, a page at a time. */
  async timeline(q: TimelineQuery): Promise<TimelinePage> {
    let query = this.#db
      .selectFrom('transitions')
      .select(['id', 'at', 'state_id', 'message', 'resource_version', 'object_id', 'related_id']);
    if (q.object !== undefined) {
      const self = await this.#db
        .selectFrom('objects')
        .select('id')
        .where('cluster', '=', this.cluster)
        .where('key', '=', q.object)
        .executeTakeFirst();
      if (!self) return { transitions: [] };
      // The referents it ever named: their own transitions belong to its story. Read first, so the timeline
      // itself is a lookup of a few objects on the (object_id, id) index.
      const named = await this.#db
        .selectFrom('transitions')
        .select('related_id')
        .distinct()
        .where('object_id', '=', self.id)
        .where('state_id', 'in', this.#db.selectFrom('states').select('id').where('type', '=', 'reference'))
        .execute();
      const ids = [self.id, ...named.flatMap((n) => (n.related_id === null ? [] : [n.related_id]))];
      query = query.where('object_id', 'in', ids);
    } else query = query.where('object_id', 'in', this.#clusterObjects());
    if (q.namespace !== undefined)
      query = query.where('object_id', 'in', this.#clusterObjects().where('namespace', '=', q.namespace));
    if (q.since !== undefined) query = query.where('at', '>=', q.since);
    if (q.until !== undefined) query = query.where('at', '<=', q.until);
    if (q.cursor !== undefined) query = query.where('id', '>', q.cursor);
    // Rows as arrays, without joining the objects' keys or the states in: a 10,000-row timeline names a handful
    // of each, and a row object and a string per column per row cost more than the query itself.
    const rows = await this.#rows<TransitionColumns>(query.orderBy('id').limit(q.limit + 1));
    const more = rows.length > q.limit;
    if (more) rows.length = q.limit;
    const keys = await this.#keysOf(rows);
    const states = await this.#statesOf(rows);
    // Made in place: each row's array is dropped as its transition takes its slot, so a collection during the
    // loop copies one of the two, not both.
    const transitions: (TransitionColumns | StoredTransition)[] = rows;
    for (let i = 0; i < rows.length; i++) transitions[i] = storedTransition(rows[i]!, keys, states);
    const made = transitions as StoredTransition[];
    return more ? { transitions: made, next: made.at(-1)!.id } : { transitions: made };
  }

  /** #rows runs a read and returns its rows as arrays of the selected columns, in order. */
  async #rows<R extends unknown[]>(query: Compilable): Promise<R[]> {
    const { sql: text, parameters } = query.compile();
    if (this.#pool) {
      const r = await this.#pool.query<R>({ text, values: [...parameters], rowMode: 'array' });
      return r.rows;
    }
    if (!this.#sqlite) throw new Error('history store has no connection');
    let statement = this.#statements.get(text);
    if (!statement) {
      // The SQL varies with the number of ids a timeline names; keep the cache small.
      if (this.#statements.size >= 64) this.#statements.clear();
      statement = this.#sqlite.prepare(text).raw(true);
      this.#statements.set(text, statement);
    }
    return statement.all(...parameters) as R[];
  }

  /** #keysOf finds the key and namespace of every object the rows name, from a cache or the objects table. */
  async #keysOf(rows: readonly TransitionColumns[]): Promise<Map<number, { key: string; namespace: string }>> {
    const missing = new Set<number>();
    for (const r of rows) {
      const object = Number(r[5]);
      if (!this.#objectKeys.has(object)) missing.add(object);
      if (r[6] !== null && !this.#objectKeys.has(Number(r[6]))) missing.add(Number(r[6]));
    }
    const ids = [...missing];
    for (let i = 0; i < ids.length; i += 500) {
      const found = await this.#db
        .selectFrom('objects')
        .select(['id', 'key', 'namespace'])
        .where('id', 'in', ids.slice(i, i + 500))
        .execute();
      for (const o of found) this.#objectKeys.set(Number(o.id), { key: o.key, namespace: o.namespace });
    }
    return this.#objectKeys;
  }

  /** #statesOf makes sure every state the rows name is known; the table is small enough to read whole. */
  async #statesOf(rows: readonly TransitionColumns[]): Promise<Map<number, StateColumns>> {
    if (rows.every((r) => this.#states.has(Number(r[2])))) return this.#states;
    const all = await this.#db
      .selectFrom('states')
      .select(['id', 'type', 'state', 'reason', 'manager', 'controller'])
      .execute();
    for (const s of all) this.#states.set(Number(s.id), s);
    return this.#states;
  }

  /**
   * lastStates returns the newest transition of every referrer (per
   * controller), referent, reference and reference controller of this
   * cluster, keyed by stateKey: what refwatch knew when it stopped or, with
   * `at`, what it knew at that instant (epoch ms); `namespace` keeps one
   * namespace's objects.
   */
  async lastStates(opts: { at?: number; namespace?: string } = {}): Promise<Map<string, StoredTransition>> {
    let latest = this.#db
      .selectFrom('transitions as t')
      .innerJoin('objects as o', 'o.id', 't.object_id')
      .innerJoin('states as s', 's.id', 't.state_id')
      .select((eb) => [eb.fn.max('t.id').as('id')])
      .where('o.cluster', '=', this.cluster)
      .where('s.type', '!=', 'warning');
    if (opts.at !== undefined) latest = latest.where('t.at', '<=', opts.at);
    if (opts.namespace !== undefined) latest = latest.where('o.namespace', '=', opts.namespace);
    latest = latest.groupBy(['t.object_id', 's.type', 's.controller', 't.related_id']);
    const rows = await this.#transitions().where('t.id', 'in', latest).execute();
    const out = new Map<string, StoredTransition>();
    for (const r of rows) {
      const t = storedRow(r);
      const key = stateKey(t);
      // A referrer's rows differ by the referent that held it up; its latest is the newest of them.
      if ((out.get(key)?.id ?? -1) < t.id) out.set(key, t);
    }
    return out;
  }

  /** #transitions selects transitions with their object's and related object's keys: every read's columns. */
  #transitions() {
    return this.#db
      .selectFrom('transitions as t')
      .innerJoin('objects as o', 'o.id', 't.object_id')
      .innerJoin('states as s', 's.id', 't.state_id')
      .leftJoin('objects as r', 'r.id', 't.related_id')
      .select([
        't.id',
        't.at',
        's.type',
        's.state',
        's.reason',
        't.message',
        't.resource_version',
        's.manager',
        's.controller',
        'o.key as object',
        'o.namespace',
        'r.key as related',
      ]);
  }

  /** lastSeen is when this cluster's writer was last alive (see touch), or undefined for a new history. */
  async lastSeen(): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom('sessions')
      .select('seen_at')
      .where('cluster', '=', this.cluster)
      .executeTakeFirst();
    return row ? Number(row.seen_at) : undefined;
  }

  /** touch records that the writer is alive at `now`; `started` marks a new session. */
  async touch(now: number, started = false): Promise<void> {
    if (this.#writer) return this.#writer.touch(this.cluster, now, started);
    await this.#db
      .insertInto('sessions')
      .values({ cluster: this.cluster, started_at: now, seen_at: now })
      .onConflict((oc) =>
        oc.column('cluster').doUpdateSet(started ? { started_at: now, seen_at: now } : { seen_at: now }),
      )
      .execute();
  }

  /**
   * prune deletes transitions older than `before`, then, when maxBytes is set
   * (SQLite), the oldest tenth at a time until the database uses less. It
   * returns the rows deleted.
   */
  async prune(before: number, maxBytes?: number): Promise<number> {
    const aged = await this.#db
      .deleteFrom('transitions')
      .where('object_id', 'in', this.#clusterObjects())
      .where('at', '<', before)
      .executeTakeFirst();
    let deleted = Number(aged.numDeletedRows);
    if (maxBytes === undefined || this.dialect !== 'sqlite') return deleted;
    for (;;) {
      const { rows, bytes } = await this.stats();
      if (bytes <= maxBytes || rows === 0) break;
      const cut = await this.#db
        .selectFrom('transitions')
        .select('id')
        .where('object_id', 'in', this.#clusterObjects())
        .orderBy('id')
        .offset(Math.max(1, Math.floor(rows / 10)) - 1)
        .limit(1)
        .executeTakeFirst();
      if (!cut) break;
      const r = await this.#db
        .deleteFrom('transitions')
        .where('object_id', 'in', this.#clusterObjects())
        .where('id', '<=', cut.id)
        .executeTakeFirst();
      deleted += Number(r.numDeletedRows);
    }
    return deleted;
  }

  /** stats counts this cluster's transitions; bytes are the whole database's. */
  async stats(): Promise<HistoryStats> {
    const agg = await this.#db
      .selectFrom('transitions')
      .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.min('at').as('oldest')])
      .where('object_id', 'in', this.#clusterObjects())
      .executeTakeFirstOrThrow();
    let bytes: number;
    if (this.#sqlite) {
      const pragma = (name: string) => Number(this.#sqlite!.pragma(name, { simple: true }));
      bytes = (pragma('page_count') - pragma('freelist_count')) * pragma('page_size');
    } else {
      const r = await sql<{
        bytes: string;
      }>`select pg_total_relation_size('transitions') + pg_total_relation_size('objects') as bytes`.execute(this.#db);
      bytes = Number(r.rows[0]!.bytes);
    }
    const s: HistoryStats = { rows: Number(agg.rows), bytes };
    if (agg.oldest !== null && agg.oldest !== undefined) s.oldestAt = Number(agg.oldest);
    return s;
  }

  #clusterObjects() {
    return this.#db.selectFrom('objects').select('id').where('cluster', '=', this.cluster);
  }

  /** ping checks that the database answers. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.#db);
  }

  /** writerRunning says whether the SQLite writer thread is alive: true until close. */
  get writerRunning(): boolean {
    return this.#writer?.running ?? false;
  }

  /** close lets the writer thread finish what it was sent, then closes every connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#writer?.close();
    await this.#db.destroy().catch(() => {});
  }
}

/** transitionRow is a transition as the transitions table stores it; storedTransition reads it back. */
function transitionRow(
  t: Transition,
  ids: ReadonlyMap<string, number>,
  states: ReadonlyMap<string, number>,
): Insertable<HistoryTables['transitions']> {
  return {
    object_id: ids.get(t.object)!,
    at: t.at,
    state_id: states.get(stateOf(t))!,
    message: t.message ?? null,
    related_id: t.related !== undefined ? ids.get(t.related)! : null,
    resource_version: t.resourceVersion ?? null,
  };
}

/** A `states` row: '' where a transition has no reason, manager or controller. */
interface StateColumns {
  type: TransitionType;
  state: string;
  reason: string;
  manager: string;
  controller: string;
}

/** stateOf keys a transition's `states` row; the writer thread keys its cache the same way. */
function stateOf(t: {
  type: string;
  state: string;
  reason?: string | null;
  manager?: string | null;
  controller?: string | null;
}): string {
  return `${t.type}\u0000${t.state}\u0000${t.reason ?? ''}\u0000${t.manager ?? ''}\u0000${t.controller ?? ''}`;
}

interface TransitionRow {
  id: number;
  at: number;
  type: TransitionType;
  object: string;
  namespace: string;
  state: string;
  /** '' for none: states store '' rather than NULL (see HistoryTables['states']). */
  reason: string;
  message: string | null;
  related: string | null;
  resource_version: string | null;
  manager: string;
  controller: string;
}

/** A timeline row: id, at, state_id, message, resource_version, object_id, related_id. */
type TransitionColumns = [number, number, number, string | null, string | null, number, number | null];

function storedTransition(
  r: TransitionColumns,
  keys: ReadonlyMap<number, { key: string; namespace: string }>,
  states: ReadonlyMap<number, StateColumns>,
): StoredTransition {
  const object = keys.get(Number(r[5]))!;
  const s = states.get(Number(r[2]))!;
  const t: StoredTransition = {
    id: Number(r[0]),
    at: Number(r[1]),
    type: s.type,
    object: object.key,
    namespace: object.namespace,
    state: s.state,
  };
  if (s.reason !== '') t.reason = s.reason;
  if (r[3] !== null) t.message = r[3];
  if (r[6] !== null) t.related = keys.get(Number(r[6]))!.key;
  if (r[4] !== null) t.resourceVersion = r[4];
  if (s.manager !== '') t.manager = s.manager;
  if (s.controller !== '') t.controller = s.controller;
  return t;
}

function storedRow(r: TransitionRow): StoredTransition {
  const t: StoredTransition = {
    id: Number(r.id),
    at: Number(r.at),
    type: r.type,
    object: r.object,
    namespace: r.namespace,
    state: r.state,
  };
  if (r.reason !== '') t.reason = r.reason;
  if (r.message !== null) t.message = r.message;
  if (r.related !== null) t.related = r.related;
  if (r.resource_version !== null) t.resourceVersion = r.resource_version;
  if (r.manager !== '') t.manager = r.manager;
  if (r.controller !== '') t.controller = r.controller;
  return t;
}

/**
 * stateKey names what one transition is the latest state of: a referrer per
 * controller, a referent, a reference (referrer, controller and referent), a
 * reference controller.
 */
export function stateKey(t: Pick<Transition, 'type' | 'object' | 'controller' | 'related'>): string {
  return `${t.type}|${t.controller ?? ''}|${t.object}|${t.type === 'reference' ? (t.related ?? '') : ''}`;
}

/** namespaceOf is the namespace of an object key, '' for a cluster-scoped one. */
export function namespaceOf(key: string): string {
  const parts = key.split('/');
  return parts.length === 3 ? parts[1]! : '';
}

/** SQLite errors that mean the file is not a usable database. */
const CORRUPT = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB']);

function sqliteDb(path: string, log: (line: string) => void): [Kysely<HistoryTables>, Database.Database] {
  mkdirSync(dirname(path), { recursive: true });
  let database: Database.Database;
  try {
    database = openChecked(path);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (!code || !CORRUPT.has(code)) throw e;
    const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
    log(
      `refwatch: history: ${path} is corrupt (${(e as Error).message}); moved it to ${aside} and started a new history`,
    );
    database = openChecked(path);
  }
  return [new Kysely<HistoryTables>({ dialect: new SqliteDialect({ database }) }), database];
}

function openChecked(path: string): Database.Database {
  const database = new Database(path);
  try {
    database.pragma('journal_mode = WAL');
    // WAL with NORMAL sync loses at most the last transactions at a power cut, never the file.
    database.pragma('synchronous = NORMAL');
    // Another process on the same file (a second refwatch) is waited for briefly; this blocks the event loop.
    database.pragma('busy_timeout = 250');
    const check = database.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw Object.assign(new Error(`integrity check: ${String(check)}`), { code: 'SQLITE_CORRUPT' });
    return database;
  } catch (e) {
    database.close();
    throw e;
  }
}

function postgresPool(url: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    connectionTimeoutMillis: 5_000,
    // int8 (ids, epoch ms) as numbers: both stay far below 2^53.
    types: { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) },
  });
  // A client whose server went away emits 'error', idle or not; the query in flight, or the next one, reports it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** redactUrl drops the password from a connection URL, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
