import { RefwatchError, err, ok, type Result } from '../model';

/**
 * A field path names fields inside a raw JSON object, kubectl-style:
 *   spec.volumes[*].configMap.name     every volume's configMap name
 *   spec.containers[0].image           the first container's image
 *   metadata.annotations['cert-manager.io/issuer']   a key that is no field name
 * Grammar: a field name, then any of `.field`, `['key']`, `[N]` and `[*]`.
 * Field names are `[A-Za-z_$][\w$-]*`; a quoted key (single or double quotes,
 * no quote or backslash inside) is any other map key, such as an annotation's;
 * `[*]` walks array elements only. A leading `.` is accepted and dropped.
 */
type Step =
  | {
      kind: 'field';
      name: string;
      /** The step as written in a concrete path, first or after another step: `spec` and `.spec`, or `['a/b']`. */
      first: string;
      next: string;
    }
  | { kind: 'index'; index: number }
  | { kind: 'each' };

/** fieldStep compiles a field step with its concrete-path text, so that a match builds paths without tests. */
function fieldStep(name: string): Step {
  const plain = FIELD_NAME.test(name);
  return { kind: 'field', name, first: plain ? name : `['${name}']`, next: plain ? `.${name}` : `['${name}']` };
}

/** FieldMatch is one value a path reached, with the concrete path that reaches it alone. */
export interface FieldMatch {
  /** Concrete path, wildcards expanded: `spec.volumes[2].configMap.name`. */
  path: string;
  value: unknown;
  /** The object or array holding the value: where sibling fields are read. */
  holder: unknown;
}

const IDENT = /[A-Za-z_$][\w$-]*/y;
const DIGITS = /\d+/y;
const QUOTED = /'([^'\\]+)'|"([^"\\]+)"/y;

export class FieldPath {
  private constructor(
    /** The path as written, without a leading `.`. */
    readonly source: string,
    private readonly steps: readonly Step[],
  ) {}

  /** parse compiles a path once; evaluating it later does no parsing. */
  static parse(source: string, field = 'path'): Result<FieldPath> {
    if (typeof source !== 'string') {
      return err(
        new RefwatchError('InvalidFieldPath', `${field} must be a string field path`, {
          field,
          example: 'spec.volumes[*].secret.secretName',
        }),
      );
    }
    const text = source.startsWith('.') ? source.slice(1) : source;
    const steps: Step[] = [];
    let i = 0;
    const fail = (what: string) =>
      err(
        new RefwatchError(
          'InvalidFieldPath',
          `${field} "${source}": ${what} at character ${i + (text === source ? 1 : 2)}`,
          {
            field,
            example: 'spec.volumes[*].secret.secretName',
          },
        ),
      );
    const ident = (): string | undefined => {
      IDENT.lastIndex = i;
      const m = IDENT.exec(text);
      if (!m) return undefined;
      i += m[0].length;
      return m[0];
    };
    // A path relative to a map may start with a quoted key: ['cert-manager.io/issuer-kind'].
    if (!text.startsWith("['") && !text.startsWith('["')) {
      const first = ident();
      if (first === undefined)
        return fail(text === '' ? 'the path is empty; expected a field name' : 'expected a field name');
      steps.push(fieldStep(first));
    }
    while (i < text.length) {
      const c = text[i];
      if (c === '.') {
        i++;
        const name = ident();
        if (name === undefined) return fail("expected a field name after '.'");
        steps.push(fieldStep(name));
      } else if (c === '[') {
        i++;
        if (text[i] === '*') {
          i++;
          steps.push({ kind: 'each' });
        } else if (text[i] === "'" || text[i] === '"') {
          QUOTED.lastIndex = i;
          const m = QUOTED.exec(text);
          if (!m) return fail('expected a non-empty quoted key without quotes or backslashes inside');
          i += m[0].length;
          steps.push(fieldStep(m[1] ?? m[2]!));
        } else {
          DIGITS.lastIndex = i;
          const m = DIGITS.exec(text);
          if (!m) return fail("expected an index or '*' after '['");
          i += m[0].length;
          steps.push({ kind: 'index', index: Number(m[0]) });
        }
        if (text[i] !== ']') return fail("expected ']'");
        i++;
      } else {
        return fail(`unexpected '${c}'; expected '.', '[N]' or '[*]'`);
      }
    }
    return ok(new FieldPath(text, steps));
  }

  /**
   * pattern is the path with every index written `[*]` and keys as a concrete path writes them:
   * two paths with the same pattern may reach the same field, two with different patterns never do.
   */
  get pattern(): string {
    let out = '';
    for (const s of this.steps) out += s.kind === 'field' ? (out === '' ? s.first : s.next) : '[*]';
    return out;
  }

  /** isConcrete: the path has no `[*]` and so reaches at most one value. */
  get isConcrete(): boolean {
    return this.steps.every((s) => s.kind !== 'each');
  }

  /** match returns every value the path reaches in root, in document order. Missing fields yield nothing. */
  match(root: unknown): FieldMatch[] {
    const out: FieldMatch[] = [];
    walk(this.steps, 0, root, '', undefined, out);
    return out;
  }

  /** get returns the first value the path reaches, or undefined. */
  get(root: unknown): unknown {
    let node = root;
    for (const s of this.steps) {
      if (s.kind === 'field') {
        if (!isRecord(node) || !Object.hasOwn(node, s.name)) return undefined;
        node = node[s.name];
      } else if (s.kind === 'index') {
        if (!Array.isArray(node) || s.index >= node.length) return undefined;
        node = node[s.index];
      } else {
        return this.match(root)[0]?.value;
      }
    }
    return node;
  }

  toString(): string {
    return this.source;
  }
}

/** compileFieldPath is FieldPath.parse for paths known to be valid (built-in packs); it throws on a bad one. */
export function compileFieldPath(source: string): FieldPath {
  const r = FieldPath.parse(source);
  if (!r.ok) throw r.error;
  return r.value;
}

/** appendField extends a concrete path by one field: `''` + `spec` is `spec`. */
export function appendField(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

const FIELD_NAME = /^[A-Za-z_$][\w$-]*$/;

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function walk(
  steps: readonly Step[],
  i: number,
  node: unknown,
  path: string,
  holder: unknown,
  out: FieldMatch[],
): void {
  if (i === steps.length) {
    out.push({ path, value: node, holder });
    return;
  }
  const s = steps[i]!;
  switch (s.kind) {
    case 'field':
      if (isRecord(node) && Object.hasOwn(node, s.name))
        walk(steps, i + 1, node[s.name], path === '' ? s.first : path + s.next, node, out);
      return;
    case 'index':
      if (Array.isArray(node) && s.index < node.length)
        walk(steps, i + 1, node[s.index], `${path}[${s.index}]`, node, out);
      return;
    case 'each':
      if (Array.isArray(node)) {
        for (let k = 0; k < node.length; k++) walk(steps, i + 1, node[k], `${path}[${k}]`, node, out);
      }
      return;
  }
}
