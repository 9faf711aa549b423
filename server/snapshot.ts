import {
  encodeSnapshotParts,
  type ChangeFilter,
  type Delta,
  type ClusterInfo,
  type EntityRows,
  type Snapshot,
  type SnapshotRows,
  type Rows,
  type StuckEntry,
} from '../lib/changelog';
import { stuckSteps, type DiagnosisSource } from '../lib/diagnose';

interface SnapshotSource {
  changelog: { snapshot(filter?: ChangeFilter): { revision: number; entities: Partial<Record<string, unknown[]>> } };
}

/**
 * buildSnapshot assembles the API snapshot from the change log at its current revision, at once.
 * `stuckThresholdMs` is the threshold `stuck` was computed with; the dashboard applies the same one between snapshots.
 */
export function buildSnapshot(
  src: SnapshotSource,
  cluster: ClusterInfo,
  stuck: StuckEntry[],
  filter: ChangeFilter = {},
  stuckThresholdMs?: number,
): Snapshot {
  const { revision, entities } = src.changelog.snapshot(filter);
  return assemble(revision, entities, cluster, stuck, stuckThresholdMs);
}

function assemble(
  revision: number,
  e: Partial<Record<string, unknown[]>>,
  cluster: ClusterInfo,
  stuck: StuckEntry[],
  stuckThresholdMs?: number,
): Snapshot {
  const list = <T>(k: string) => (e[k] ?? []) as T[];
  return {
    revision,
    cluster,
    controllers: list('controller'),
    watches: list('watch'),
    referrers: list('referrer'),
    referents: list('referent'),
    references: list('reference'),
    queues: list('queue'),
    events: list('event'),
    stuck,
    ...(stuckThresholdMs !== undefined ? { stuckThresholdMs } : {}),
  };
}

/** How long one slice of snapshot work may hold the event loop before it yields (ms). */
export const SLICE_MS = 8;
/** Entities read or encoded between looks at the clock. */
const STEP = 1000;

const yieldLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** runSliced runs a computation made of steps, yielding the event loop whenever a slice has run `sliceMs`. */
export async function runSliced<T>(steps: Generator<unknown, T>, sliceMs = SLICE_MS): Promise<T> {
  let sliceStart = performance.now();
  try {
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
      if (performance.now() - sliceStart >= sliceMs) {
        await yieldLoop();
        sliceStart = performance.now();
      }
    }
  } finally {
    steps.return(undefined as T); // a reader of the change log is released even if a step threw
  }
}

export interface CaptureSource extends DiagnosisSource {
  changelog: DiagnosisSource['changelog'] & {
    snapshotRowsSteps(filter?: ChangeFilter, step?: number): Generator<void, EntityRows>;
  };
}

export interface CaptureOptions {
  cluster: () => ClusterInfo;
  filter?: ChangeFilter;
  /** The stuck list's threshold; it judges the snapshot's own referrers, the scope's. */
  stuckThresholdMs: number;
  sliceMs?: number;
}

/**
 * captureSnapshot reads the change log's snapshot at one revision, of the
 * filter's scope, and the stuck referrers among its referrers, in slices that
 * each hold the event loop at most about `sliceMs`: on a registry of a million
 * references, no request waits behind it.
 */
export async function captureSnapshot(src: CaptureSource, opts: CaptureOptions): Promise<SnapshotRows> {
  const { revision, entities } = await runSliced(
    src.changelog.snapshotRowsSteps(opts.filter ?? {}, STEP),
    opts.sliceMs,
  );
  // A diagnosis costs more than reading an entity (a missing referent's "did you mean" compares up to thousands of names): few per step.
  const stuck = await runSliced(
    stuckSteps(src, entities.referrer, { olderThan: opts.stuckThresholdMs, now: Date.now() }, 25),
    opts.sliceMs,
  );
  // The kinds that grow with the cluster stay in the chunks they were read into; the few others become arrays.
  const list = <K extends 'controller' | 'watch' | 'queue' | 'event'>(kind: K) =>
    runSliced(entities[kind].toArray(), opts.sliceMs);
  return {
    revision,
    cluster: opts.cluster(),
    controllers: await list('controller'),
    watches: await list('watch'),
    referrers: entities.referrer,
    referents: entities.referent,
    references: entities.reference,
    queues: await list('queue'),
    events: await list('event'),
    stuck,
    stuckThresholdMs: opts.stuckThresholdMs,
  };
}

/**
 * Text one slice holds at most, in UTF-16 units (about): a string under V8's
 * large-object size (128 KB) is allocated young and dies young, where a
 * slice of megabytes would go straight to the old generation and hasten its
 * collections, which hold the event loop the longest.
 */
export const SLICE_CHARS = 32 * 1024;

/**
 * slicedText joins JSON text pieces into slices of at most about
 * SLICE_CHARS, yielding the event loop whenever about `sliceMs` has gone by.
 * The value the pieces encode is not changed by anyone, so the text is of
 * one revision.
 */
export async function* slicedText(parts: Iterable<string>, sliceMs = SLICE_MS): AsyncGenerator<string> {
  let pending: string[] = [];
  let size = 0;
  let sliceStart = performance.now();
  for (const part of parts) {
    if (part !== '') {
      pending.push(part);
      size += part.length;
    }
    if (size >= SLICE_CHARS) {
      yield pending.join('');
      pending = [];
      size = 0;
    }
    if (performance.now() - sliceStart >= sliceMs) {
      if (pending.length > 0) yield pending.join('');
      pending = [];
      size = 0;
      await yieldLoop();
      sliceStart = performance.now();
    }
  }
  if (pending.length > 0) yield pending.join('');
}

/** The plain snapshot's arrays, in the order docs/api.md shows them. */
const PLAIN_ARRAYS = [
  'controllers',
  'watches',
  'referrers',
  'referents',
  'references',
  'queues',
  'events',
  'stuck',
] as const satisfies readonly (keyof Snapshot)[];

function* plainArray(field: string, list: Rows<unknown>): Generator<string> {
  yield `,"${field}":[`;
  let first = true;
  for (const value of list) {
    yield first ? JSON.stringify(value) : `,${JSON.stringify(value)}`;
    first = false;
  }
  yield ']';
}

/**
 * plainSnapshotParts yields a snapshot as plain JSON, the entity shape a
 * script reads without refwatch's decoder (docs/api.md, GET snapshot), an
 * entity a piece, so a caller may yield the event loop between pieces.
 */
export function* plainSnapshotParts(s: SnapshotRows): Generator<string> {
  yield `{"revision":${s.revision},"cluster":${JSON.stringify(s.cluster)}`;
  for (const field of PLAIN_ARRAYS) yield* plainArray(field, s[field]);
  if (s.stuckThresholdMs !== undefined) yield `,"stuckThresholdMs":${JSON.stringify(s.stuckThresholdMs)}`;
  yield '}';
}

/** plainDeltaParts yields a delta as plain JSON (`{from, revision, changes}`), a change a piece. */
export function* plainDeltaParts(d: Delta): Generator<string> {
  yield `{"from":${d.from},"revision":${d.revision}`;
  yield* plainArray('changes', d.changes);
  yield '}';
}

/** snapshotText is a snapshot's JSON, lean (the wire format) unless asked for plain, in slices. */
export const snapshotText = (s: SnapshotRows, sliceMs = SLICE_MS, plain = false): AsyncGenerator<string> =>
  slicedText(plain ? plainSnapshotParts(s) : encodeSnapshotParts(s), sliceMs);

const encoder = new TextEncoder();

/** snapshotBody is a response body of the snapshot's JSON (lean unless `plain`), encoded slice by slice as the client reads. */
export function snapshotBody(s: SnapshotRows, sliceMs = SLICE_MS, plain = false): ReadableStream<Uint8Array> {
  const text = snapshotText(s, sliceMs, plain);
  return new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      const r = await text.next();
      if (r.done) ctrl.close();
      else ctrl.enqueue(encoder.encode(r.value));
    },
    async cancel() {
      await text.return(undefined);
    },
  });
}
