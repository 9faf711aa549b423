import 'server-only';
import { Worker } from 'node:worker_threads';
import type { Transition } from './schema';

/** The values a transition travels as, in order (see flatten): a flat array of primitives is the cheapest to post. */
const FIELDS = 11;

/**
 * The writer thread's code. better-sqlite3 is synchronous: a transaction of
 * 1,000 rows holds the thread that runs it for milliseconds, so the writes
 * run here, beside the engine's event loop rather than in it. Plain
 * JavaScript evaluated as the worker's script, so it needs no loader or
 * bundler: `require` resolves better-sqlite3 from the working directory,
 * which is the repository or the standalone server's folder.
 *
 * Messages: {id, op: 'write', cluster, flat} with FIELDS values per row,
 * {id, op: 'touch', cluster, now, started}, {op: 'close'}. Every request is
 * answered {id} or {id, error: {message, code}}, in order.
 */
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');
let db;
let opened;
try {
  db = new Database(workerData.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // This thread blocks nobody: wait for a reader's checkpoint or another process rather than fail.
  db.pragma('busy_timeout = 5000');
  opened = {
    addObject: db.prepare('insert into objects (cluster, key, namespace) values (?, ?, ?) on conflict (cluster, key) do nothing'),
    objectId: db.prepare('select id from objects where cluster = ? and key = ?').pluck(),
    insert: db.prepare('insert into transitions (object_id, at, type, state, reason, message, related_id, resource_version, manager, controller) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    touch: db.prepare('insert into sessions (cluster, started_at, seen_at) values (?, ?, ?) on conflict (cluster) do update set seen_at = excluded.seen_at'),
    start: db.prepare('insert into sessions (cluster, started_at, seen_at) values (?, ?, ?) on conflict (cluster) do update set started_at = excluded.started_at, seen_at = excluded.seen_at'),
  };
} catch (e) {
  opened = e;
}
const ids = new Map();
function idOf(cluster, key, namespace) {
  const k = cluster + '\\u0000' + key;
  let id = ids.get(k);
  if (id === undefined) {
    opened.addObject.run(cluster, key, namespace);
    id = opened.objectId.get(cluster, key);
    ids.set(k, id);
  }
  return id;
}
function namespaceOf(key) {
  const parts = key.split('/');
  return parts.length === 3 ? parts[1] : '';
}
// By hand rather than db.transaction(): SQLite rolls back by itself on some errors (SQLITE_FULL at commit),
// and the first error is the one to report.
function inTransaction(work) {
  db.exec('begin');
  try {
    work();
    db.exec('commit');
  } catch (e) {
    // A failed insert may leave ids of objects that the rollback removes.
    ids.clear();
    if (db.inTransaction) {
      try { db.exec('rollback'); } catch {}
    }
    throw e;
  }
}
function write(cluster, f) {
  inTransaction(() => {
    for (let i = 0; i < f.length; i += ${FIELDS}) {
      const object = idOf(cluster, f[i], f[i + 1]);
      const related = f[i + 6] === null ? null : idOf(cluster, f[i + 6], namespaceOf(f[i + 6]));
      opened.insert.run(object, f[i + 2], f[i + 3], f[i + 4], f[i + 5], f[i + 7], related, f[i + 8], f[i + 9], f[i + 10]);
    }
  });
}
parentPort.on('message', (m) => {
  if (m.op === 'close') {
    try { db && db.close(); } catch {}
    parentPort.close();
    return;
  }
  try {
    if (opened instanceof Error) throw opened;
    if (m.op === 'write') write(m.cluster, m.flat);
    else if (m.op === 'touch') (m.started ? opened.start : opened.touch).run(m.cluster, m.now, m.now);
    parentPort.postMessage({ id: m.id });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: { message: e && e.message ? e.message : String(e), code: e && e.code } });
  }
});
`;

/** flatten lays transitions out as FIELDS values each, in the order the writer thread reads them. */
export function flatten(rows: readonly Transition[]): (string | number | null)[] {
  const f = new Array<string | number | null>(rows.length * FIELDS);
  let i = 0;
  for (const r of rows) {
    f[i++] = r.object;
    f[i++] = r.namespace;
    f[i++] = r.at;
    f[i++] = r.type;
    f[i++] = r.state;
    f[i++] = r.reason ?? null;
    f[i++] = r.related ?? null;
    f[i++] = r.message ?? null;
    f[i++] = r.resourceVersion ?? null;
    f[i++] = r.manager ?? null;
    f[i++] = r.controller ?? null;
  }
  return f;
}

interface Pending {
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * SqliteWriter owns a worker thread that holds the SQLite file's write
 * connection. Requests are answered in the order they were sent; an error
 * comes back with SQLite's code (SQLITE_FULL, SQLITE_CORRUPT…). When the
 * thread ends for any reason, what is pending is rejected and every later
 * request too, so the recorder counts the drops and reopens the store.
 */
export class SqliteWriter {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #exited: Promise<void>;
  #next = 1;
  #ended: Error | undefined;

  constructor(path: string) {
    this.#worker = new Worker(WRITER, { eval: true, workerData: { path } });
    // An idle writer does not keep the process alive; one with requests in flight does (see #send).
    this.#worker.unref();
    this.#worker.on('message', (m: { id: number; error?: { message: string; code?: string } }) => {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) this.#worker.unref();
      if (m.error) p.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
      else p.resolve();
    });
    this.#worker.on('error', (e) => this.#end(e));
    this.#exited = new Promise((resolve) =>
      this.#worker.once('exit', (code) => {
        this.#end(new Error(`the history writer thread stopped (exit code ${code})`));
        resolve();
      }),
    );
  }

  /** running is true until the writer thread has exited. */
  get running(): boolean {
    return this.#ended === undefined;
  }

  /** write stores transitions in one transaction, on the writer thread. */
  write(cluster: string, rows: readonly Transition[]): Promise<void> {
    return this.#send({ op: 'write', cluster, flat: flatten(rows) });
  }

  /** touch records that the writer is alive at `now`; `started` marks a new session. */
  touch(cluster: string, now: number, started: boolean): Promise<void> {
    return this.#send({ op: 'touch', cluster, now, started });
  }

  #send(message: Record<string, unknown>): Promise<void> {
    if (this.#ended) return Promise.reject(this.#ended);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) this.#worker.ref();
      this.#worker.postMessage({ id, ...message });
    });
  }

  /**
   * close lets the thread finish what it was sent, closes its connection and
   * waits for it to exit; after `timeoutMs` it is terminated and what is
   * still pending is rejected.
   */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.#ended) return this.#exited;
    this.#worker.ref();
    this.#worker.postMessage({ op: 'close' });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    if ((await Promise.race([this.#exited, timeout])) === 'timeout') await this.#worker.terminate();
    clearTimeout(timer);
    await this.#exited;
  }

  #end(e: Error): void {
    this.#ended ??= e;
    for (const p of this.#pending.values()) p.reject(this.#ended);
    this.#pending.clear();
  }
}
