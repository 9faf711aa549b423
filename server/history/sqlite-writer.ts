import 'server-only';
import { Worker } from 'node:worker_threads';
import type { Transition } from './schema';

/** The numbers a transition travels as, in order (see BatchEncoder); a string field is its index in the table. */
const FIELDS = 11;
/** How much nicer (lower in priority) the writer thread is than the thread that starts it. */
export const WRITER_NICE = 5;
/** Rows per multi-row insert: one statement call binds this many rows rather than one. */
const CHUNK = 64;

/**
 * The writer thread's code. better-sqlite3 is synchronous: a transaction of
 * 1,000 rows holds the thread that runs it for milliseconds, so the writes
 * run here, beside the engine's event loop rather than in it. Plain
 * JavaScript evaluated as the worker's script, so it needs no loader or
 * bundler: `require` resolves better-sqlite3 from the working directory,
 * which is the repository or the standalone server's folder.
 *
 * Messages: {id, op: 'write', cluster, strings, reset, values} (see
 * BatchEncoder: values is a transferred Float64Array of FIELDS numbers per
 * row), {id, op: 'touch', cluster, now, started}, {op: 'close'}. Every
 * request is answered {id} or {id, error: {message, code}}, in order.
 */
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');
// Where this thread and the engine's want the same core, the engine's goes first: a batch may wait a few
// milliseconds, a resolution should not. On Linux, a priority of 0 names this thread alone.
try {
  const os = require('node:os');
  os.setPriority(Math.min(19, os.getPriority() + ${WRITER_NICE}));
} catch {}
const INSERT = 'insert into transitions (object_id, at, state_id, message, related_id, resource_version) values ';
const ROW = '(?, ?, ?, ?, ?, ?)';
let db;
let opened;
// The strings of every batch so far, by index: the main thread sends each one once (see BatchEncoder).
let strings = [];
try {
  db = new Database(workerData.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // This thread blocks nobody: wait for a reader's checkpoint or another process rather than fail.
  db.pragma('busy_timeout = 5000');
  opened = {
    addObject: db.prepare('insert into objects (cluster, key, namespace) values (?, ?, ?) on conflict (cluster, key) do nothing'),
    objectId: db.prepare('select id from objects where cluster = ? and key = ?').pluck(),
    addState: db.prepare('insert into states (type, state, reason, manager, controller) values (?, ?, ?, ?, ?) on conflict do nothing'),
    stateId: db.prepare('select id from states where type = ? and state = ? and reason = ? and manager = ? and controller = ?').pluck(),
    insert: db.prepare(INSERT + ROW),
    insertChunk: db.prepare(INSERT + new Array(${CHUNK}).fill(ROW).join(', ')),
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
// A transition's row in the states table, '' for what it lacks; keyed as the store keys it (stateOf).
const stateIds = new Map();
function stateIdOf(type, state, reason, manager, controller) {
  const k = type + '\u0000' + state + '\u0000' + reason + '\u0000' + manager + '\u0000' + controller;
  let id = stateIds.get(k);
  if (id === undefined) {
    opened.addState.run(type, state, reason, manager, controller);
    id = opened.stateId.get(type, state, reason, manager, controller);
    stateIds.set(k, id);
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
    // A failed insert may leave ids of objects and states that the rollback removes.
    ids.clear();
    stateIds.clear();
    if (db.inTransaction) {
      try { db.exec('rollback'); } catch {}
    }
    throw e;
  }
}
function str(i) {
  return i < 0 ? null : strings[i];
}
function text(i) {
  return i < 0 ? '' : strings[i];
}
const params = new Array(${CHUNK} * 6);
function write(cluster, v) {
  const rows = v.length / ${FIELDS};
  inTransaction(() => {
    let p = 0;
    for (let r = 0; r < rows; r++) {
      const i = r * ${FIELDS};
      params[p++] = idOf(cluster, strings[v[i]], strings[v[i + 1]]);
      params[p++] = v[i + 2];
      params[p++] = stateIdOf(strings[v[i + 3]], strings[v[i + 4]], text(v[i + 5]), text(v[i + 9]), text(v[i + 10]));
      params[p++] = str(v[i + 7]);
      params[p++] = v[i + 6] < 0 ? null : idOf(cluster, strings[v[i + 6]], namespaceOf(strings[v[i + 6]]));
      params[p++] = str(v[i + 8]);
      if (p === params.length) {
        opened.insertChunk.run(params);
        p = 0;
      }
    }
    for (let q = 0; q < p; q += 6) opened.insert.run(params.slice(q, q + 6));
  });
}
parentPort.on('message', (m) => {
  if (m.op === 'close') {
    try { db && db.close(); } catch {}
    parentPort.close();
    return;
  }
  try {
    if (m.op === 'write') {
      // Before the write, so that the table matches the main thread's even when the write fails.
      if (m.reset) strings = [];
      for (const t of m.strings) strings.push(t);
    }
    if (opened instanceof Error) throw opened;
    if (m.op === 'write') write(m.cluster, m.values);
    else if (m.op === 'touch') (m.started ? opened.start : opened.touch).run(m.cluster, m.now, m.now);
    parentPort.postMessage({ id: m.id });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: { message: e && e.message ? e.message : String(e), code: e && e.code } });
  }
});
`;

/** An encoded batch: the strings the writer thread has not been sent yet, and FIELDS numbers per row. */
export interface EncodedBatch {
  /** Appended to the thread's table, after clearing it when reset is set. */
  strings: string[];
  reset: boolean;
  values: Float64Array<ArrayBuffer>;
}

/**
 * BatchEncoder lays a batch out as numbers in one buffer, which is
 * transferred to the writer thread rather than copied. A string field is an
 * index into a table both threads keep: keys, states, controllers and
 * managers repeat from batch to batch, so each crosses once, and posting a
 * batch copies no per-row values on the engine's thread. The table starts
 * over beyond maxStrings, so unique strings (resource versions, messages) do
 * not make it grow without bound.
 */
export class BatchEncoder {
  readonly #index = new Map<string, number>();
  readonly #maxStrings: number;
  #added: string[] = [];

  constructor(maxStrings = 50_000) {
    this.#maxStrings = maxStrings;
  }

  encode(rows: readonly Transition[]): EncodedBatch {
    const reset = this.#index.size >= this.#maxStrings;
    if (reset) this.#index.clear();
    const values = new Float64Array(rows.length * FIELDS);
    let i = 0;
    for (const r of rows) {
      values[i++] = this.#of(r.object);
      values[i++] = this.#of(r.namespace);
      values[i++] = r.at;
      values[i++] = this.#of(r.type);
      values[i++] = this.#of(r.state);
      values[i++] = this.#of(r.reason);
      values[i++] = this.#of(r.related);
      values[i++] = this.#of(r.message);
      values[i++] = this.#of(r.resourceVersion);
      values[i++] = this.#of(r.manager);
      values[i++] = this.#of(r.controller);
    }
    const strings = this.#added;
    this.#added = [];
    return { strings, reset, values };
  }

  #of(s: string | undefined): number {
    if (s === undefined) return -1;
    let i = this.#index.get(s);
    if (i === undefined) {
      i = this.#index.size;
      this.#index.set(s, i);
      this.#added.push(s);
    }
    return i;
  }
}

/** decode reads an encoded batch back with the table the thread would hold: the encoder's contract, for tests. */
export function decode(batch: EncodedBatch, table: string[]): (string | number | null)[][] {
  if (batch.reset) table.length = 0;
  table.push(...batch.strings);
  const rows: (string | number | null)[][] = [];
  for (let i = 0; i < batch.values.length; i += FIELDS)
    rows.push(Array.from(batch.values.subarray(i, i + FIELDS), (v, f) => (f === 2 ? v : v < 0 ? null : table[v]!)));
  return rows;
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
  readonly #encoder = new BatchEncoder();
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
    if (this.#ended) return Promise.reject(this.#ended);
    const batch = this.#encoder.encode(rows);
    return this.#send({ op: 'write', cluster, ...batch }, [batch.values.buffer]);
  }

  /** touch records that the writer is alive at `now`; `started` marks a new session. */
  touch(cluster: string, now: number, started: boolean): Promise<void> {
    return this.#send({ op: 'touch', cluster, now, started });
  }

  #send(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<void> {
    if (this.#ended) return Promise.reject(this.#ended);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) this.#worker.ref();
      this.#worker.postMessage({ id, ...message }, transfer);
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
