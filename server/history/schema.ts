import 'server-only';
import { sql, type Generated, type Kysely, type Migration, type MigrationProvider } from 'kysely';

/**
 * The history's tables, one schema for SQLite and PostgreSQL. Object keys are
 * stored once in `objects` and transitions name them by number, which keeps a
 * transition row to a few dozen bytes: the keys are most of a row otherwise.
 */
export interface HistoryTables {
  objects: {
    id: Generated<number>;
    /** The cluster's identity (see clusterIdentity), so one database can hold several clusters. */
    cluster: string;
    key: string;
    namespace: string;
  };
  transitions: {
    /** Assigned by the database, increasing; the order and the cursor of a timeline. */
    id: Generated<number>;
    object_id: number;
    /** Epoch ms. */
    at: number;
    /** What the object became, in `states`. */
    state_id: number;
    message: string | null;
    /** The other object: the referent that caused a referrer's state, or the referent a reference names. */
    related_id: number | null;
    resource_version: string | null;
  };
  /**
   * The vocabulary of transitions: each distinct type, state, reason, manager
   * and controller once, '' where a transition has none. There are a few
   * hundred of them in a cluster's history, so a transition names one by
   * number, and a timeline of 10,000 rows reads seven columns, not eleven.
   */
  states: {
    id: Generated<number>;
    type: TransitionType;
    state: string;
    reason: string;
    /** The managedFields manager that made the change, and only its name. */
    manager: string;
    controller: string;
  };
  sessions: {
    cluster: string;
    started_at: number;
    /** The last time this cluster's writer was alive: "last seen" for what changed while refwatch was down. */
    seen_at: number;
  };
}

/**
 * What a transition is about: a referrer's or a referent's state, a reference
 * that started or stopped, a reference controller's lifecycle, an admission
 * warning (written by the admission handler through HistoryRecorder.warning).
 */
export type TransitionType = 'referrer' | 'referent' | 'reference' | 'controller' | 'warning';

/** Transition is one recorded change, as written and as read back. */
export interface Transition {
  at: number;
  type: TransitionType;
  object: string;
  namespace: string;
  state: string;
  reason?: string;
  message?: string;
  /** The referent that caused a referrer's state, or the referent a reference names. */
  related?: string;
  resourceVersion?: string;
  manager?: string;
  controller?: string;
}

export type Dialect = 'sqlite' | 'postgres';

/**
 * MIGRATIONS are applied in order at start. A name is never reused or
 * changed; a new schema is a new entry at the end.
 */
export function migrations(dialect: Dialect): Record<string, Migration> {
  // Ids are the database's own, so writers of several clusters never collide: SQLite's INTEGER PRIMARY KEY is
  // its row id (no extra index), PostgreSQL's serial types a sequence, 64 bits for transitions so they never wrap.
  const id = dialect === 'postgres' ? 'bigserial' : 'integer';
  const objectId = dialect === 'postgres' ? 'serial' : 'integer';
  return {
    '0001_transitions': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('objects')
          .addColumn('id', objectId, (c) => c.primaryKey())
          .addColumn('cluster', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('namespace', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('objects_cluster_key').on('objects').columns(['cluster', 'key']).unique().execute();
        await db.schema
          .createIndex('objects_cluster_namespace')
          .on('objects')
          .columns(['cluster', 'namespace'])
          .execute();
        await db.schema
          .createTable('transitions')
          .addColumn('id', id, (c) => c.primaryKey())
          .addColumn('object_id', 'integer', (c) => c.notNull())
          .addColumn('at', 'bigint', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('reason', 'text')
          .addColumn('message', 'text')
          .addColumn('related_id', 'integer')
          .addColumn('resource_version', 'text')
          .addColumn('manager', 'text')
          .addColumn('controller', 'text')
          .execute();
        await db.schema.createIndex('transitions_object').on('transitions').columns(['object_id', 'id']).execute();
        await db.schema.createIndex('transitions_at').on('transitions').columns(['at']).execute();
        await db.schema
          .createTable('sessions')
          .addColumn('cluster', 'text', (c) => c.primaryKey())
          .addColumn('started_at', 'bigint', (c) => c.notNull())
          .addColumn('seen_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0002_states': {
      // SQLite runs each statement of a migration as a transaction of its own, and each adds its pages to the
      // write-ahead log; as one transaction the migration logs each page once.
      up: (db: Kysely<unknown>) =>
        dialect === 'sqlite' ? db.transaction().execute((tx) => statesUp(tx, objectId)) : statesUp(db, objectId),
    },
  };
}

/** statesUp moves a transition's type, state, reason, manager and controller into `states`. */
async function statesUp(db: Kysely<unknown>, id: 'serial' | 'integer'): Promise<void> {
  await db.schema
    .createTable('states')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('manager', 'text', (c) => c.notNull())
    .addColumn('controller', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('states_all')
    .on('states')
    .columns(['type', 'state', 'reason', 'manager', 'controller'])
    .unique()
    .execute();
  await sql`insert into states (type, state, reason, manager, controller)
          select distinct type, state, coalesce(reason, ''), coalesce(manager, ''), coalesce(controller, '')
          from transitions`.execute(db);
  await db.schema
    .alterTable('transitions')
    .addColumn('state_id', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update transitions set state_id = (select s.id from states s
          where s.type = transitions.type and s.state = transitions.state and s.reason = coalesce(transitions.reason, '')
            and s.manager = coalesce(transitions.manager, '') and s.controller = coalesce(transitions.controller, ''))`.execute(
    db,
  );
  // One column at a time: SQLite drops one per statement.
  for (const column of ['type', 'state', 'reason', 'manager', 'controller'])
    await db.schema.alterTable('transitions').dropColumn(column).execute();
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: () => Promise.resolve(migrations(dialect)) };
}

/** The migrator's own table; read before migrating to refuse a schema newer than this binary. */
export const MIGRATION_TABLE = 'refwatch_migration';
export const MIGRATION_LOCK_TABLE = 'refwatch_migration_lock';

/** appliedMigrations lists the migrations a database has, or [] when it has none yet. */
export async function appliedMigrations(db: Kysely<unknown>): Promise<string[]> {
  const tables = await db.introspection.getTables();
  if (!tables.some((t) => t.name === MIGRATION_TABLE)) return [];
  const rows = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)} order by name`.execute(db);
  return rows.rows.map((r) => r.name);
}
