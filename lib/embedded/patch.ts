import { ApiError, badRequest } from './status';

type Json = unknown;

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** mergePatch applies an RFC 7386 JSON merge patch: objects merge, null deletes, anything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/'))
    throw badRequest(
      `the server rejected our request due to an error in our request: JSON pointer "${p}" must start with '/'`,
    );
  return p
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function fail(op: JsonPatchOp, why: string): ApiError {
  // kube-apiserver answers a JSON patch that does not apply with 422 (NewGenericServerResponse).
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `the server rejected our request due to an error in our request: ${op.op} operation on path "${op.path}": ${why}`,
    reason: 'Invalid',
    code: 422,
  });
}

function parentOf(
  doc: Json,
  tokens: string[],
  op: JsonPatchOp,
): { parent: Record<string, Json> | Json[]; last: string } {
  let cur: Json = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else throw fail(op, 'path does not exist');
    if (cur === undefined) throw fail(op, 'path does not exist');
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw fail(op, 'path does not exist');
  return { parent: cur, last: tokens[tokens.length - 1]! };
}

function getAt(doc: Json, path: string, op: JsonPatchOp): Json {
  let cur: Json = doc;
  for (const t of parsePointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else throw fail(op, 'path does not exist');
    if (cur === undefined) throw fail(op, 'path does not exist');
  }
  return cur;
}

function arrayIndex(arr: Json[], token: string, op: JsonPatchOp, forInsert: boolean): number {
  if (forInsert && token === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw fail(op, `invalid array index "${token}"`);
  const i = Number(token);
  if (i > arr.length || (!forInsert && i === arr.length)) throw fail(op, `array index ${i} out of bounds`);
  return i;
}

function add(doc: Json, path: string, value: Json, op: JsonPatchOp): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(doc, tokens, op);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, op, true), 0, value);
  else parent[last] = value;
  return doc;
}

function remove(doc: Json, path: string, op: JsonPatchOp): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) throw fail(op, 'cannot remove the whole document');
  const { parent, last } = parentOf(doc, tokens, op);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, op, false), 1);
  else {
    if (!(last in parent)) throw fail(op, 'path does not exist');
    delete parent[last];
  }
  return doc;
}

function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** jsonPatch applies an RFC 6902 JSON patch (add, remove, replace, move, copy, test). */
export function jsonPatch(target: Json, patch: Json): Json {
  if (!Array.isArray(patch))
    throw badRequest(
      'the server rejected our request due to an error in our request: a JSON patch must be an array of operations',
    );
  let doc = structuredClone(target);
  for (const raw of patch) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw badRequest(
        'the server rejected our request due to an error in our request: each JSON patch operation needs "op" and "path"',
      );
    }
    const op = raw as unknown as JsonPatchOp;
    switch (op.op) {
      case 'add':
        doc = add(doc, op.path, structuredClone(op.value), op);
        break;
      case 'remove':
        doc = remove(doc, op.path, op);
        break;
      case 'replace':
        getAt(doc, op.path, op);
        doc = add(remove(doc, op.path, op), op.path, structuredClone(op.value), op);
        break;
      case 'move': {
        const v = getAt(doc, op.from ?? '', op);
        doc = add(remove(doc, op.from ?? '', op), op.path, v, op);
        break;
      }
      case 'copy':
        doc = add(doc, op.path, structuredClone(getAt(doc, op.from ?? '', op)), op);
        break;
      case 'test':
        if (!deepEqual(getAt(doc, op.path, op), op.value)) throw fail(op, 'testing value failed');
        break;
      default:
        throw badRequest(
          `the server rejected our request due to an error in our request: unsupported JSON patch operation "${op.op}"`,
        );
    }
  }
  return doc;
}
