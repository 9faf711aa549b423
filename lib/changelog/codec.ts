import { keyHasKind, keyHasNamespace, kindOfKey, namespaceOfKey } from '../model';
import type { EntityKind } from './entities';
import type { Rows } from './chunked';
import type { Change, Delta, Snapshot, SnapshotRows } from './wire';
import { Refs, Registry, RowCache, SHARED_ROWS, currentRegistry, type RowCodes } from './wire-registry';

export { wireStringsHeld } from './wire-registry';

/**
 * The lean wire format of GET /api/v1/snapshot and the stream's `snapshot`
 * and `delta` events (see wire.ts for the layout). encodeSnapshotParts and
 * encodeDeltaParts produce the JSON text in pieces, so a server can send a
 * large snapshot in slices; decodeSnapshot and decodeDelta turn the parsed
 * JSON back into the entity shapes of entities.ts. decode(encode(x)) equals x.
 */
export const WIRE_FORMAT = 'refwatch.lean/1';
/** The lean format's media type: a client that decodes it asks for it (Accept, or `?format=lean` on the stream). */
export const LEAN_MEDIA_TYPE = 'application/vnd.refwatch.lean+json';

/** How one column encodes its field's values; every codec has an "absent" mark (0 or null). */
type Codec =
  | 'key' // an object key: index into the message's key table, minus the previous row's index
  | 'str' // an interned string: 1 + index into the message's string table; 0 absent
  | 'num' // a finite number, as is
  | 'time' // an integer (epoch ms): minus `base` of the same row when given, else minus the previous row's
  | 'raw'; // any JSON value but null, as is

interface Field {
  readonly name: string;
  readonly codec: Codec;
  readonly base?: string;
}

/** A field rebuilt on decode from others; `holds` tells, without building it, whether a value is the one derive gives. */
interface Derived {
  derive(row: Row): unknown;
  holds(row: Row, value: unknown): boolean;
}

/** A table's columns, and the fields rebuilt on decode from the others (carried only when they differ). */
interface Schema {
  readonly fields: readonly Field[];
  readonly derived: Readonly<Record<string, Derived>>;
  /** Its rows are built for each message (not change-log values): what is learnt of one is not kept. */
  readonly fresh?: true;
}

type Row = Record<string, unknown>;

/** An encoded table: `n` rows, one array per field, and `x`: per row, the fields its columns could not carry. */
export interface WireTable {
  n: number;
  x?: Record<string, Row>;
  [column: string]: unknown;
}

/** Object keys split as kind / namespace / name; kind and namespace are string references (0: the name is the whole key). */
export interface WireKeys {
  kind: number[];
  namespace: number[];
  name: string[];
}

export interface WireSnapshot {
  format: typeof WIRE_FORMAT;
  revision: number;
  cluster: Snapshot['cluster'];
  stuckThresholdMs?: number;
  controllers: Snapshot['controllers'];
  watches: Snapshot['watches'];
  queues: Snapshot['queues'];
  referrers: WireTable;
  referents: WireTable;
  references: WireTable;
  events: WireTable;
  stuck: WireTable;
  keys: WireKeys;
  strings: string[];
}

export interface WireDelta {
  format: typeof WIRE_FORMAT;
  from: number;
  revision: number;
  /** One letter per change, oldest first (see ENTITY_LETTER); upper case is a tombstone. */
  changes: { entity: string; revision: number[]; removed: number[]; ids?: Record<string, string> };
  controllers?: unknown[];
  referrers?: WireTable;
  referents?: WireTable;
  references?: WireTable;
  events?: WireTable;
  watches?: unknown[];
  queues?: unknown[];
  keys: WireKeys;
  strings: string[];
}

/** The fields' values joined with '|' (an id). */
const joined = (...names: string[]): Derived => ({
  derive: (r) => names.map((n) => String(r[n])).join('|'),
  holds: (r, value) => {
    if (typeof value !== 'string') return false;
    let at = 0;
    for (let i = 0; i < names.length; i++) {
      const part = r[names[i]!];
      if (typeof part !== 'string' || !value.startsWith(part, at)) return false;
      at += part.length;
      if (i < names.length - 1 && value.charCodeAt(at++) !== 124) return false;
    }
    return at === value.length;
  },
});
/** The field's value as is. */
const same = (name: string): Derived => ({ derive: (r) => r[name], holds: (r, value) => value === r[name] });
// A key's kind and namespace are derived on decode only where holds was true on encode; elsewhere the row carries them.
/** The kind of the key in the field. */
const kindOfField = (name: string): Derived => ({
  derive: (r) => (typeof r[name] === 'string' ? kindOfKey(r[name]) : undefined),
  holds: (r, value) => {
    const key = r[name];
    return typeof key === 'string' && typeof value === 'string' && keyHasKind(key, value);
  },
});
/** The namespace of the key in the field. */
const namespaceOfField = (name: string): Derived => ({
  derive: (r) => (typeof r[name] === 'string' ? namespaceOfKey(r[name]) : undefined),
  holds: (r, value) => {
    const key = r[name];
    return typeof key === 'string' && typeof value === 'string' && keyHasNamespace(key, value);
  },
});

const f = (name: string, codec: Codec, base?: string): Field =>
  base === undefined ? { name, codec } : { name, codec, base };

const SCHEMAS = {
  referrer: {
    fields: [
      f('controller', 'str'),
      f('key', 'key'),
      f('state', 'str'),
      f('reason', 'str'),
      f('message', 'str'),
      f('since', 'time'),
      f('references', 'num'),
      f('reconciles', 'num'),
      f('lastReconcileAt', 'time', 'since'),
      f('resolvedAt', 'time', 'since'),
      f('warning', 'str'),
      f('selections', 'raw'),
    ],
    derived: { id: joined('controller', 'key'), kind: kindOfField('key'), namespace: namespaceOfField('key') },
  },
  referent: {
    fields: [
      f('key', 'key'),
      f('state', 'str'),
      f('message', 'str'),
      f('referencedBy', 'num'),
      f('uid', 'raw'),
      f('resourceVersion', 'raw'),
      f('manager', 'str'),
      f('changedAt', 'time'),
    ],
    derived: { id: same('key'), kind: kindOfField('key'), namespace: namespaceOfField('key') },
  },
  reference: {
    fields: [
      f('controller', 'str'),
      f('referrer', 'key'),
      f('referent', 'key'),
      f('fieldPath', 'str'),
      f('count', 'num'),
      f('selector', 'str'),
    ],
    derived: {
      id: joined('controller', 'referrer', 'referent', 'fieldPath'),
      kind: kindOfField('referent'),
      namespace: namespaceOfField('referrer'),
    },
  },
  event: {
    fields: [
      f('id', 'raw'),
      f('at', 'time'),
      f('type', 'str'),
      f('message', 'str'),
      f('key', 'key'),
      f('kind', 'str'),
      f('namespace', 'str'),
      f('controller', 'str'),
      f('latencyMs', 'num'),
    ],
    derived: {},
  },
  stuck: {
    fields: [
      f('controller', 'str'),
      f('key', 'key'),
      f('state', 'str'),
      f('since', 'time'),
      f('ageMs', 'num'),
      f('reason', 'str'),
      f('message', 'str'),
      f('fix', 'str'),
      f('referent', 'key'),
      f('rootCause', 'raw'),
      f('workload', 'key'),
    ],
    derived: { id: joined('controller', 'key') },
    fresh: true,
  },
} satisfies Record<string, Schema>;

type TableName = keyof typeof SCHEMAS;

/** Snapshot fields sent as tables, and those sent as plain entity arrays (few entities each). */
const TABLES = [
  ['referrers', 'referrer'],
  ['referents', 'referent'],
  ['references', 'reference'],
  ['events', 'event'],
] as const;
const PLAIN = ['controllers', 'watches', 'queues'] as const;

/** The letter of each entity kind in a delta's `changes.entity`. */
export const ENTITY_LETTER: Readonly<Record<EntityKind, string>> = {
  referrer: 'r',
  referent: 'n',
  reference: 'f',
  controller: 'c',
  watch: 'w',
  queue: 'q',
  event: 'e',
};
const LETTER_ENTITY = new Map(Object.entries(ENTITY_LETTER).map(([k, v]) => [v, k as EntityKind]));
const TABLE_OF: Partial<Record<EntityKind, TableName>> = {
  referrer: 'referrer',
  referent: 'referent',
  reference: 'reference',
  event: 'event',
};
const FIELD_OF: Record<EntityKind, keyof WireDelta> = {
  referrer: 'referrers',
  referent: 'referents',
  reference: 'references',
  event: 'events',
  controller: 'controllers',
  watch: 'watches',
  queue: 'queues',
};

/** Rows encoded between checkpoints: a caller slicing the work gets control back this often. */
const STEP = 500;

/**
 * Text an array keeps in one piece, at least, once it has that much (UTF-16
 * units): a string this long is made in V8's large-object space, which
 * scavenges do not copy. A snapshot of a million references keeps its
 * columns' text for seconds; kept as small pieces, every scavenge meanwhile
 * copied them, and with them held the event loop.
 */
const KEPT_CHARS = 1 << 18;
/** A kept piece goes out in cuts of at most this many units, which a response's slices join young (server/snapshot.ts). */
const CUT_CHARS = 1 << 14;

/**
 * ArrayText is a JSON array's text, made as values come: they wait until
 * STEP have come, then are kept as the text they go out as, joined into
 * pieces of KEPT_CHARS. No array of a million values is built, grown
 * (copying it all at once) and promoted.
 */
class ArrayText {
  /** The values' text in pieces, joined with ',' (no brackets). */
  readonly #pieces: string[] = [];
  /** Text of values since the last piece, in STEP values each, and its length. */
  #recent: string[] = [];
  #recentChars = 0;
  /** Values not yet in pieces: the first #pending of STEP slots, kept between flushes (no array regrown per piece). */
  readonly #slots: unknown[] = Array.from({ length: STEP }, () => 0);
  #pending = 0;
  #length = 0;

  get length(): number {
    return this.#length;
  }

  /** Adds a value; returns the array's length. */
  push(value: unknown): number {
    this.#slots[this.#pending++] = value;
    if (this.#pending === STEP) this.#flush();
    return ++this.#length;
  }

  #flush(): void {
    if (this.#pending === 0) return;
    const values = this.#pending === STEP ? this.#slots : this.#slots.slice(0, this.#pending);
    const text = JSON.stringify(values).slice(1, -1);
    this.#recent.push(text);
    this.#recentChars += text.length;
    this.#pending = 0;
    if (this.#recentChars >= KEPT_CHARS) this.#keep();
  }

  #keep(): void {
    const recent = this.#recent;
    if (recent.length === 0) return;
    this.#pieces.push(recent.join(','));
    this.#recent = [];
    this.#recentChars = 0;
  }

  /** The array as a JSON member `"name":[...]`, after `lead`. */
  *json(name: string, lead = ','): Generator<string> {
    this.#flush();
    this.#keep();
    yield `${lead}${JSON.stringify(name)}:[`;
    const pieces = this.#pieces;
    for (let i = 0; i < pieces.length; i++) {
      if (i > 0) yield ',';
      yield* cuts(pieces[i]!);
    }
    yield ']';
  }
}

/** A text in cuts of at most CUT_CHARS units, none between the two halves of a surrogate pair. */
function* cuts(text: string): Generator<string> {
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + CUT_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield text.slice(at, end);
    at = end;
  }
}

/** Interner builds one message's string and key tables (see WireKeys), as JSON text, from registry ids. */
class Interner {
  readonly strings = new ArrayText();
  readonly keys = { kind: new ArrayText(), namespace: new ArrayText(), name: new ArrayText() };
  readonly registry: Registry;
  readonly #strings: Refs;
  readonly #keys: Refs;
  readonly #dense: boolean;

  /** Whether the registry is the one kept between messages (rows' codes are kept in it) or this message's own. */
  readonly shared: boolean;

  /**
   * dense: for a snapshot, which sends most of the registry's strings (and
   * counts toward its peak). rows: the rows the message sends; a message of
   * more than SHARED_ROWS gets a registry of its own, dropped with it.
   */
  constructor(dense: boolean, rows: number) {
    this.#dense = dense;
    this.shared = rows <= SHARED_ROWS;
    this.registry = this.shared ? currentRegistry() : new Registry();
    this.#strings = new Refs(dense);
    this.#keys = new Refs(dense);
  }

  /** 1 + the string's index. */
  str(s: string): number {
    return this.strOf(this.registry.id(s));
  }

  strOf(id: number): number {
    let ref = this.#strings.get(id);
    if (ref === 0) this.#strings.set(id, (ref = this.strings.push(this.registry.strings.at(id))));
    return ref;
  }

  /** The key's index in the key table. */
  keyOf(id: number): number {
    let ref = this.#keys.get(id);
    if (ref === 0) {
      const r = this.registry;
      r.split(id);
      const kind = r.keyKind.at(id);
      this.keys.kind.push(kind < 0 ? 0 : this.strOf(kind));
      this.keys.namespace.push(kind < 0 ? 0 : this.strOf(r.keyNamespace.at(id)));
      this.#keys.set(id, (ref = this.keys.name.push(r.keyName(id))));
    }
    return ref - 1;
  }

  /**
   * Counts this message's strings and keys toward the registry's peak, as it
   * goes: while a large snapshot is encoded in slices, the strings it added
   * are not taken for garbage by a delta sent between the slices.
   */
  notePeak(): void {
    if (!this.#dense || !this.shared) return;
    const size = this.strings.length + this.keys.name.length;
    if (size > this.registry.peak) this.registry.peak = size;
  }
}

/** An encoded table: its columns' JSON text. */
interface EncodedTable {
  n: number;
  columns: [name: string, text: ArrayText][];
  x?: Record<string, Row>;
}

/** Whether a column of the codec carries v (else v goes in the row's extra fields). */
function carries(codec: Codec, v: unknown): boolean {
  switch (codec) {
    case 'key':
    case 'str':
      return typeof v === 'string';
    case 'num':
      return typeof v === 'number' && Number.isFinite(v);
    case 'time':
      return Number.isSafeInteger(v);
    case 'raw':
      return v !== null;
  }
}

/** The fields of a row its table's columns do not carry: values no codec takes, derived fields that differ, unknown fields. */
function extraOf(schema: Schema, known: ReadonlySet<string>, row: Row): Row | null {
  let extra: Row | null = null;
  for (const { name, codec } of schema.fields) {
    const v = row[name];
    if (v !== undefined && !carries(codec, v)) (extra ??= {})[name] = v;
  }
  for (const name in schema.derived) {
    if (!schema.derived[name]!.holds(row, row[name])) (extra ??= {})[name] = row[name] === undefined ? null : row[name];
  }
  for (const name in row) {
    if (!known.has(name) && row[name] !== undefined) (extra ??= {})[name] = row[name];
  }
  return extra;
}

/** Writes the row's RowCodes into `codes` (one slot more than the schema has fields) and returns it. */
function codesOf(schema: Schema, known: ReadonlySet<string>, registry: Registry, row: Row, codes: RowCodes): RowCodes {
  codes[0] = extraOf(schema, known, row);
  const fields = schema.fields;
  for (let c = 0; c < fields.length; c++) {
    const { name, codec, base } = fields[c]!;
    const v = row[name];
    const carried = v !== undefined && carries(codec, v);
    if (codec === 'key' || codec === 'str') codes[c + 1] = carried ? registry.id(v as string) : -1;
    else if (!carried) codes[c + 1] = undefined;
    else codes[c + 1] = codec === 'time' && base !== undefined ? (v as number) - timeBase(row[base]) : v;
  }
  return codes;
}

/** TableEncoder encodes one table's columns, each straight into JSON text, a range of rows at a time. */
class TableEncoder {
  readonly #schema: Schema;
  readonly #tables: Interner;
  readonly #names: string[];
  readonly #codecs: Codec[];
  readonly #based: boolean[];
  readonly #columns: ArrayText[];
  /** Per column: the previous row's key index or time (delta codecs). */
  readonly #prev: number[];
  readonly #known: Set<string>;
  readonly #codes: RowCache | undefined;
  readonly #scratch: RowCodes;
  readonly #x: Record<string, Row> = {};
  #rows = 0;

  constructor(schema: Schema, tables: Interner) {
    this.#schema = schema;
    this.#tables = tables;
    this.#names = schema.fields.map((fl) => fl.name);
    this.#codecs = schema.fields.map((fl) => fl.codec);
    this.#based = schema.fields.map((fl) => fl.base !== undefined);
    this.#columns = schema.fields.map(() => new ArrayText());
    this.#prev = schema.fields.map(() => 0);
    this.#known = new Set([...this.#names, ...Object.keys(schema.derived)]);
    this.#scratch = Array.from({ length: schema.fields.length + 1 }, () => undefined);
    if (!schema.fresh && tables.shared) {
      const rows = tables.registry.rows;
      let codes = rows.get(schema);
      if (codes === undefined) rows.set(schema, (codes = new RowCache()));
      this.#codes = codes;
    }
  }

  table(): EncodedTable {
    const table: EncodedTable = { n: this.#rows, columns: this.#names.map((name, c) => [name, this.#columns[c]!]) };
    if (Object.keys(this.#x).length > 0) table.x = this.#x;
    return table;
  }

  /** Adds one row to the columns. */
  add(row: Row): void {
    const codes = this.#codesOf(row);
    const tables = this.#tables;
    const prev = this.#prev;
    for (let c = 0; c < this.#codecs.length; c++) {
      const v = codes[c + 1];
      const column = this.#columns[c]!;
      switch (this.#codecs[c]) {
        case 'key': {
          if ((v as number) < 0) {
            column.push(null);
            break;
          }
          const k = tables.keyOf(v as number);
          column.push(k - prev[c]!);
          prev[c] = k;
          break;
        }
        case 'str':
          column.push((v as number) < 0 ? 0 : tables.strOf(v as number));
          break;
        case 'time':
          if (v === undefined) column.push(null);
          else if (this.#based[c]) column.push(v);
          else {
            column.push((v as number) - prev[c]!);
            prev[c] = v as number;
          }
          break;
        default:
          column.push(v === undefined ? null : v);
      }
    }
    if (codes[0]) this.#x[this.#rows] = codes[0] as Row;
    this.#rows++;
  }

  #codesOf(row: Row): RowCodes {
    const cache = this.#codes;
    // Not kept: worked out into the same array row after row, nothing allocated.
    if (cache === undefined) return codesOf(this.#schema, this.#known, this.#tables.registry, row, this.#scratch);
    let codes = cache.get(row);
    if (codes === undefined)
      cache.add(
        row,
        (codes = codesOf(this.#schema, this.#known, this.#tables.registry, row, new Array(this.#scratch.length))),
      );
    return codes;
  }
}

/** Encodes rows into a table, STEP rows between checkpoints. */
function* encodeTable(schema: Schema, rows: Rows<object>, tables: Interner): Generator<void, EncodedTable> {
  const encoder = new TableEncoder(schema, tables);
  let n = 0;
  for (const row of rows) {
    encoder.add(row as Row);
    if (++n % STEP === 0) {
      tables.notePeak();
      if (n < rows.length) yield;
    }
  }
  tables.notePeak();
  return encoder.table();
}

const timeBase = (v: unknown): number => (Number.isSafeInteger(v) ? (v as number) : 0);

/** JSON text of an encoded table, in pieces of at most STEP values. */
function* tableJson(table: EncodedTable): Generator<string> {
  yield `{"n":${table.n}`;
  for (const [name, text] of table.columns) yield* text.json(name);
  if (table.x) yield `,"x":${JSON.stringify(table.x)}`;
  yield '}';
}

function* arrayJson(name: string, values: readonly unknown[], lead = ','): Generator<string> {
  yield `${lead}${JSON.stringify(name)}:[`;
  for (let i = 0; i < values.length; i += STEP) {
    const part = values.slice(i, i + STEP);
    yield (i > 0 ? ',' : '') + JSON.stringify(part).slice(1, -1);
  }
  yield ']';
}

function* tablesJson(tables: Interner): Generator<string> {
  yield ',"keys":{';
  yield* tables.keys.kind.json('kind', '');
  yield* tables.keys.namespace.json('namespace');
  yield* tables.keys.name.json('name');
  yield '}';
  yield* tables.strings.json('strings');
}

/**
 * encodeSnapshotParts yields the JSON text of a snapshot's wire form in
 * pieces; joined, they are one JSON document. Between pieces the caller may
 * yield the event loop: the snapshot's arrays are read, never changed, and
 * entity values are immutable. An empty piece is a checkpoint.
 */
export function* encodeSnapshotParts(s: SnapshotRows): Generator<string> {
  const tables = new Interner(
    true,
    s.referrers.length + s.referents.length + s.references.length + s.events.length + s.stuck.length,
  );
  yield `{"format":"${WIRE_FORMAT}","revision":${s.revision},"cluster":${JSON.stringify(s.cluster)}`;
  if (s.stuckThresholdMs !== undefined) yield `,"stuckThresholdMs":${JSON.stringify(s.stuckThresholdMs)}`;
  for (const field of PLAIN) yield* arrayJson(field, s[field]);
  for (const [field, schema] of [...TABLES, ['stuck', 'stuck'] as const]) {
    const table = yield* checkpoints(encodeTable(SCHEMAS[schema], s[field], tables));
    yield `,"${field}":`;
    yield* tableJson(table);
  }
  yield* tablesJson(tables);
  yield '}';
}

/** encodeDeltaParts yields the JSON text of a delta's wire form in pieces, as encodeSnapshotParts does. */
export function* encodeDeltaParts(d: Delta): Generator<string> {
  const tables = new Interner(false, d.changes.length);
  const letters: string[] = [];
  const revisions: number[] = [];
  const removed: number[] = [];
  const ids: Record<string, string> = {};
  const values = new Map<EntityKind, object[]>();
  let prev = d.from;
  d.changes.forEach((change, i) => {
    const letter = ENTITY_LETTER[change.entity];
    letters.push(change.removed ? letter.toUpperCase() : letter);
    revisions.push(change.revision - prev);
    prev = change.revision;
    if (change.removed) {
      removed.push(tables.str(change.id));
      return;
    }
    if ((change.value as { id?: unknown }).id !== change.id) ids[i] = change.id;
    const list = values.get(change.entity);
    if (list) list.push(change.value);
    else values.set(change.entity, [change.value]);
  });
  const changes: WireDelta['changes'] = { entity: letters.join(''), revision: revisions, removed };
  if (Object.keys(ids).length > 0) changes.ids = ids;
  yield `{"format":"${WIRE_FORMAT}","from":${d.from},"revision":${d.revision},"changes":${JSON.stringify(changes)}`;
  for (const [entity, list] of values) {
    const schema = TABLE_OF[entity];
    yield `,"${FIELD_OF[entity]}":`;
    if (schema === undefined) {
      yield JSON.stringify(list);
      continue;
    }
    yield* tableJson(yield* checkpoints(encodeTable(SCHEMAS[schema], list, tables)));
  }
  yield* tablesJson(tables);
  yield '}';
}

/** Runs an encoder's steps, passing each checkpoint on as an empty piece. */
function* checkpoints<T>(steps: Generator<void, T>): Generator<string, T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    yield '';
  }
}

/** encodeSnapshot and encodeDelta: the whole JSON text at once. */
export const encodeSnapshot = (s: SnapshotRows): string => [...encodeSnapshotParts(s)].join('');
export const encodeDelta = (d: Delta): string => [...encodeDeltaParts(d)].join('');

/** WireFormatError: a message that is not the lean wire format this client reads. */
export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

function checkFormat(raw: unknown, what: string): asserts raw is Record<string, unknown> {
  if (raw === null || typeof raw !== 'object') throw new WireFormatError(`${what} is not a JSON object`);
  const format = (raw as { format?: unknown }).format;
  if (format !== WIRE_FORMAT) {
    throw new WireFormatError(
      `${what} has format ${JSON.stringify(format ?? null)}, this client reads ${WIRE_FORMAT}: use a client and server of the same refwatch version`,
    );
  }
}

/** Decoder reads one message's tables. */
class Decoder {
  readonly #keys: string[];
  readonly #strings: readonly string[];

  constructor(raw: Record<string, unknown>, what: string) {
    const keys = raw.keys as WireKeys | undefined;
    const strings = raw.strings;
    if (
      !Array.isArray(strings) ||
      !keys ||
      !Array.isArray(keys.name) ||
      !Array.isArray(keys.kind) ||
      !Array.isArray(keys.namespace)
    ) {
      throw new WireFormatError(`${what} lacks its "keys" or "strings" table`);
    }
    this.#strings = strings as string[];
    this.#keys = keys.name.map((name, i) => {
      const kind = keys.kind[i]!;
      return kind === 0 ? name : `${this.str(kind)}/${this.str(keys.namespace[i]!)}/${name}`;
    });
  }

  str(ref: number): string {
    const s = this.#strings[ref - 1];
    if (s === undefined) throw new WireFormatError(`string reference ${ref} is outside the message's string table`);
    return s;
  }

  table(schema: Schema, raw: unknown, field: string): Row[] {
    if (raw === undefined) return [];
    const t = raw as WireTable;
    if (t === null || typeof t !== 'object' || !Number.isInteger(t.n))
      throw new WireFormatError(`"${field}" is not a table`);
    const cols = schema.fields.map((fl) => {
      const col = t[fl.name];
      if (!Array.isArray(col) || col.length !== t.n)
        throw new WireFormatError(`"${field}.${fl.name}" is not a column of ${t.n} values`);
      return col as unknown[];
    });
    const prev = schema.fields.map(() => 0);
    const rows = new Array<Row>(t.n);
    for (let i = 0; i < t.n; i++) {
      const row: Row = {};
      for (let c = 0; c < cols.length; c++) {
        const { name, codec, base } = schema.fields[c]!;
        const v = cols[c]![i];
        if (v === null || (codec === 'str' && v === 0)) continue;
        switch (codec) {
          case 'key': {
            const k = prev[c]! + (v as number);
            prev[c] = k;
            const key = this.#keys[k];
            if (key === undefined)
              throw new WireFormatError(`"${field}.${name}" refers to key ${k}, outside the message's key table`);
            row[name] = key;
            break;
          }
          case 'str':
            row[name] = this.str(v as number);
            break;
          case 'time':
            if (base === undefined) row[name] = prev[c] = prev[c]! + (v as number);
            else row[name] = timeBase(row[base]) + (v as number);
            break;
          default:
            row[name] = v;
        }
      }
      const extra = t.x?.[i];
      if (extra) {
        for (const [name, value] of Object.entries(extra)) {
          if (value === null) delete row[name];
          else row[name] = value;
        }
      }
      for (const [name, { derive }] of Object.entries(schema.derived)) {
        if (extra && name in extra) continue;
        const d = derive(row);
        if (d !== undefined) row[name] = d;
      }
      rows[i] = row;
    }
    return rows;
  }
}

/** decodeSnapshot turns a parsed GET /api/v1/snapshot body (or a stream's `snapshot` event) into a Snapshot. */
export function decodeSnapshot(raw: unknown): Snapshot {
  checkFormat(raw, 'the snapshot');
  const d = new Decoder(raw, 'the snapshot');
  const plain = <T>(field: string): T[] => (Array.isArray(raw[field]) ? (raw[field] as T[]) : []);
  const s = {
    revision: typeof raw.revision === 'number' ? raw.revision : 0,
    cluster: raw.cluster,
    controllers: plain('controllers'),
    watches: plain('watches'),
    referrers: d.table(SCHEMAS.referrer, raw.referrers, 'referrers'),
    referents: d.table(SCHEMAS.referent, raw.referents, 'referents'),
    references: d.table(SCHEMAS.reference, raw.references, 'references'),
    queues: plain('queues'),
    events: d.table(SCHEMAS.event, raw.events, 'events'),
    stuck: d.table(SCHEMAS.stuck, raw.stuck, 'stuck'),
  } as unknown as Snapshot;
  if (typeof raw.stuckThresholdMs === 'number') s.stuckThresholdMs = raw.stuckThresholdMs;
  return s;
}

/** decodeDelta turns a parsed stream `delta` event into a Delta. */
export function decodeDelta(raw: unknown): Delta {
  checkFormat(raw, 'the delta');
  const d = new Decoder(raw, 'the delta');
  const c = raw.changes as WireDelta['changes'] | undefined;
  if (
    !c ||
    typeof c.entity !== 'string' ||
    !Array.isArray(c.revision) ||
    !Array.isArray(c.removed) ||
    c.revision.length !== c.entity.length
  ) {
    throw new WireFormatError('the delta\'s "changes" lacks its entity letters, revisions or removed ids');
  }
  const from = raw.from as number;
  const rows = new Map<EntityKind, { list: unknown[]; at: number }>();
  const next = (entity: EntityKind): unknown => {
    let read = rows.get(entity);
    if (read === undefined) {
      const field = FIELD_OF[entity];
      const table = TABLE_OF[entity];
      read = {
        list:
          table === undefined
            ? ((raw[field] as unknown[] | undefined) ?? [])
            : d.table(SCHEMAS[table], raw[field], field),
        at: 0,
      };
      rows.set(entity, read);
    }
    const value = read.list[read.at++];
    if (value === undefined) throw new WireFormatError(`the delta has more ${entity} changes than ${FIELD_OF[entity]}`);
    return value;
  };
  const changes: Change[] = [];
  let revision = from;
  let tombstone = 0;
  for (let i = 0; i < c.entity.length; i++) {
    const letter = c.entity[i]!;
    const entity = LETTER_ENTITY.get(letter.toLowerCase());
    if (entity === undefined) throw new WireFormatError(`the delta names an unknown entity letter "${letter}"`);
    revision += c.revision[i]!;
    if (letter !== letter.toLowerCase()) {
      changes.push({ entity, id: d.str(c.removed[tombstone++]!), revision, removed: true });
      continue;
    }
    const value = next(entity) as { id: string };
    changes.push({ entity, id: c.ids?.[i] ?? value.id, revision, removed: false, value } as Change);
  }
  return { from, revision: raw.revision as number, changes };
}
