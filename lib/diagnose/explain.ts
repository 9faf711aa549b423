import {
  RefwatchError,
  err,
  formatKey,
  kindOfKey,
  ok,
  parseKey,
  type ObjectKey,
  type ObjectRef,
  type Result,
} from '../model';
import type { ReferrerState, RootCause, SelectionSummary } from '../changelog';
import type { DiagnosisSource } from './source';
import { ReferenceDiagnosis, type ReferenceExplanation } from './reference-diagnosis';
import { noteOf, withNote } from './reference-note';
import { registryBlockers, rootCause } from './root-cause';
import { SimilarNames } from './similar-names';

export type { DiagnosisSource } from './source';

/** ReferrerExplanation is one controller's view of the referrer: its state and each reference, in declaration order. */
export interface ReferrerExplanation {
  controller: string;
  state: ReferrerState;
  /** When the referrer entered its state (epoch ms). */
  since: number;
  /** What its last reconcile reported, when not Resolved (a reconcile error's message, for state Error). */
  reason?: string;
  message?: string;
  /** What does not block it but deserves a look (a NetworkPolicy selecting no Pod). */
  warning?: string;
  /** Its label selectors: what each selects, where, how many it matched and how many are Ready. */
  selections?: SelectionSummary[];
  references: ReferenceExplanation[];
  /** Where the chain of blocked referrers ends, when the blocking referent is itself a blocked referrer. */
  rootCause?: RootCause;
}

/** Explanation is the answer of GET /api/v1/explain?object=KEY. */
export interface Explanation {
  object: ObjectKey;
  controllers: ReferrerExplanation[];
}

export interface ExplainOptions {
  /** Only this controller's view of the referrer. */
  controller?: string;
  /** The instant to judge ages against (epoch ms); defaults to now. */
  now?: number;
}

/** ExplainError is a failed explain: its code says why (InvalidKey, NotFound) and suggestions lists close referrer keys. */
export class ExplainError extends RefwatchError {
  readonly suggestions: ObjectKey[];
  constructor(code: string, message: string, opts: { field: string; suggestions?: ObjectKey[]; example?: string }) {
    super(code, message, { field: opts.field, example: opts.example });
    this.name = 'ExplainError';
    this.suggestions = opts.suggestions ?? [];
  }
}

/**
 * explain says, for each controller that reconciles the referrer, its state
 * and why each of its references is or is not resolved, with a fix. It reads
 * the registry, the change log and the reference controllers' caches only:
 * explaining registers no reference and starts no watch. Where the blocking
 * referent is itself a blocked referrer, rootCause follows the chain.
 */
export function explain(
  manager: DiagnosisSource,
  objectKey: string,
  opts: ExplainOptions = {},
): Result<Explanation, ExplainError> {
  const parsed = parseKey(objectKey, 'object');
  if (!parsed.ok)
    return err(
      new ExplainError(parsed.error.code, parsed.error.message, { field: 'object', example: parsed.error.example }),
    );
  const key = formatKey(parsed.value);
  const now = opts.now ?? Date.now();
  const names = manager.controllerNames();
  if (opts.controller !== undefined && !names.includes(opts.controller)) {
    return err(
      new ExplainError(
        'NotFound',
        `controller "${opts.controller}" does not exist; controllers: ${names.length > 0 ? names.join(', ') : 'none yet'}`,
        {
          field: 'controller',
          example: names[0],
        },
      ),
    );
  }
  const diagnosis = new ReferenceDiagnosis(manager.referenceControllers, now);
  const blockers = registryBlockers(manager, diagnosis);
  const controllers: ReferrerExplanation[] = [];
  for (const controller of opts.controller !== undefined ? [opts.controller] : names) {
    const entity = manager.changelog.get('referrer', `${controller}|${key}`);
    const refs = manager.registry.referencesOf(controller, key);
    if (!entity && refs.length === 0) continue;
    const view: ReferrerExplanation = {
      controller,
      // Registered but not yet reported: its first reconcile is running.
      state: entity?.state ?? 'Waiting',
      since: entity?.since ?? now,
      references: refs.map((ref) => {
        const e = diagnosis.explain(ref, manager.controller(controller)?.namespaceFieldOf(ref.fieldPath));
        return withNote(e, noteOf(manager, controller, key, e));
      }),
    };
    if (entity?.reason !== undefined) view.reason = entity.reason;
    if (entity?.message !== undefined) view.message = entity.message;
    if (entity?.warning !== undefined) view.warning = entity.warning;
    if (entity?.selections !== undefined) view.selections = entity.selections;
    const rc = rootCause(blockers, key, controller);
    if (rc) view.rootCause = rc;
    controllers.push(view);
  }
  if (controllers.length === 0) return err(notAReferrer(manager, parsed.value, key, opts.controller));
  return ok({ object: key, controllers });
}

/** notAReferrer builds the NotFound error: close referrer keys of the same kind, and who refers to the key if it is a referent. */
function notAReferrer(
  manager: DiagnosisSource,
  ref: ObjectRef,
  key: ObjectKey,
  controller: string | undefined,
): ExplainError {
  const kind = kindOfKey(key);
  const keys = new Set<ObjectKey>();
  for (const r of manager.changelog.snapshot({ entities: ['referrer'], kind }).entities.referrer) {
    if (controller === undefined || r.controller === controller) keys.add(r.key);
  }
  const index = new SimilarNames(keys);
  const suggestions = [
    ...index.namespacesWith(ref.name, ref.namespace).map((ns) => `${kind}/${ns}/${ref.name}`),
    ...index.similarIn(ref.namespace, ref.name).matches.map((s) => `${kind}/${ref.namespace}/${s.name}`),
  ];
  const of = controller === undefined ? 'any controller' : `controller ${controller}`;
  let message = `${key} is not a referrer of ${of}`;
  if (suggestions.length > 0) message += `; did you mean ${suggestions.join(' or ')}?`;
  const referredBy = manager.registry.referrersOf(key);
  if (referredBy.length > 0) {
    const shown = referredBy.slice(0, 3).map((r) => `${r.key} (${r.controller})`);
    message += `; it is a referent, referred to by ${shown.join(', ')}${referredBy.length > shown.length ? ` and ${referredBy.length - shown.length} more` : ''}: explain one of those`;
    for (const r of referredBy.slice(0, 3)) suggestions.push(r.key);
  }
  return new ExplainError('NotFound', message, { field: 'object', suggestions: [...new Set(suggestions)] });
}
