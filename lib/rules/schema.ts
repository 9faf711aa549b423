import { z } from 'zod';
import { validateGroup, validateKind } from '../model';
import { FieldPath } from './field-path';

/*
 * The rules file format (docs/rules.md). One document holds:
 *   rules        referrer kind → field paths that name referents
 *   conventions  field-name conventions (`*Ref`, `*Refs`) for any kind
 *   kinds        what refwatch knows about a referent kind: scope and readiness
 * Every object is strict: an unknown field is an error, so a typo never
 * silently drops a reference.
 */

const kindName = z.string().superRefine((s, ctx) => {
  const r = validateKind(s);
  if (!r.ok)
    ctx.addIssue({
      code: 'custom',
      message: `"${s}" is not a kind: use CamelCase, starting with an uppercase letter (ConfigMap)`,
    });
});

const groupName = z.string().superRefine((s, ctx) => {
  const r = validateGroup(s);
  if (!r.ok)
    ctx.addIssue({
      code: 'custom',
      message: `"${s}" is not an API group: use a lowercase DNS name, or '' for the core group`,
    });
});

const fieldPath = z.string().superRefine((s, ctx) => {
  const r = FieldPath.parse(s, 'path');
  if (!r.ok)
    ctx.addIssue({
      code: 'custom',
      message: `${r.error.message.replace(/^path /, '').replace(/ \(example: .*\)$/, '')}; write it like spec.volumes[*].secret.secretName`,
    });
});

export const scopeSchema = z.enum(['Namespaced', 'Cluster']);
export type Scope = z.infer<typeof scopeSchema>;

/** The referrer kind a rule applies to. */
export const kindRefSchema = z.strictObject({
  group: groupName.default(''),
  kind: kindName,
});

/** Take the referent's group from the referrer's: its last `lastLabels` dot-separated labels, or all of it. */
const groupFromReferrerSchema = z.strictObject({
  fromReferrer: z.literal(true),
  lastLabels: z.number().int().min(1).optional(),
});

/** The referent kind a reference names unless the object says otherwise (kindField, groupField, apiVersionField). */
export const referentSchema = z.strictObject({
  group: z
    .union([groupName, groupFromReferrerSchema], {
      error: "group must be an API group ('' for core) or {fromReferrer: true, lastLabels: N}",
    })
    .default(''),
  kind: kindName,
});

/**
 * How to turn one name into a referent. Every `*Field` is a field path
 * relative to the object holding the name (`namespace` next to `name`).
 */
const targetShape = {
  /** The default referent kind; may be left out when kindField is given. */
  referent: referentSchema.optional(),
  /** The referent's scope whatever kind it is; otherwise discovery or the `kinds` table decide, and Namespaced if neither does. */
  scope: scopeSchema.optional(),
  /** Field holding the referent's namespace; when absent or empty, the referrer's namespace. */
  namespaceField: fieldPath.optional(),
  /**
   * The referent's namespace when namespaceField gives none and the referrer is cluster-scoped: where a
   * cluster-scoped referrer's controller keeps its Secrets (cert-manager's ClusterIssuer reads them from `cert-manager`).
   */
  namespace: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { error: 'namespace must be a namespace name (cert-manager)' })
    .optional(),
  /** Field holding the referent's kind; when absent, referent.kind. */
  kindField: fieldPath.optional(),
  /** Field holding the referent's group ('' is core); when absent, referent.group. */
  groupField: fieldPath.optional(),
  /** Field holding an apiVersion (`apps/v1`) whose group is the referent's group. */
  apiVersionField: fieldPath.optional(),
  /** The referrer works without this referent (Pod `optional: true` refs). */
  optional: z.boolean().optional(),
  /** Boolean field saying whether the reference is optional. */
  optionalField: fieldPath.optional(),
  /**
   * 'warn': the reference is shown and explained, but a referent that is
   * missing or not ready never makes the referrer unresolved or stuck (an
   * owner that is gone, a back-pointer). Default 'block'.
   */
  severity: z.enum(['block', 'warn'], { error: "severity must be 'block' (the default) or 'warn'" }).optional(),
  /**
   * A reference into another namespace is permitted only by a Gateway API
   * ReferenceGrant in the referent's namespace; without one it is
   * RefNotPermitted, whatever the referent's state.
   */
  needsGrant: z.boolean().optional(),
  /**
   * The referent is a Service that must answer calls: one whose own selector (Service → Pods) matches
   * no Ready Pod is NotReady (NoReadyEndpoints), as a webhook's, an APIService's or a conversion webhook's.
   */
  readyEndpoints: z.boolean().optional(),
  /** Only names whose holder has this field equal to this value (a subject of kind ServiceAccount). */
  when: z.strictObject({ field: fieldPath, equals: z.union([z.string(), z.array(z.string()).min(1)]) }).optional(),
};

function checkTarget(
  v: {
    referent?: unknown;
    kindField?: unknown;
    groupField?: unknown;
    apiVersionField?: unknown;
    optional?: unknown;
    optionalField?: unknown;
  },
  ctx: z.RefinementCtx,
) {
  if (v.referent === undefined && v.kindField === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['referent'],
      message: 'is required unless kindField reads the kind from the object: give referent: {kind: ...}',
    });
  if (v.groupField !== undefined && v.apiVersionField !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['apiVersionField'],
      message: 'give groupField or apiVersionField, not both',
    });
  if (v.optional !== undefined && v.optionalField !== undefined)
    ctx.addIssue({ code: 'custom', path: ['optionalField'], message: 'give optional or optionalField, not both' });
}

export const referenceRuleSchema = z
  .strictObject({
    /** Field path to the name(s), e.g. spec.volumes[*].secret.secretName. */
    path: fieldPath,
    /**
     * Field path to the name when `path` names nothing: an ExternalSecret's Secret takes the ExternalSecret's
     * own name (metadata.name) unless spec.target.name gives one.
     */
    fallbackPath: fieldPath.optional(),
    ...targetShape,
    /**
     * The referrer creates this referent (a Certificate its Secret), so it does not wait on it: the reference
     * is not resolved for the referrer, and diagnosis names the referrer as the producer of a missing referent.
     */
    produces: z.boolean().optional(),
  })
  .superRefine(checkTarget)
  .superRefine((v, ctx) => {
    if (v.produces === true && (v.optional !== undefined || v.optionalField !== undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['produces'],
        message: 'a produced referent is never waited on: drop optional/optionalField',
      });
  });

/**
 * A selector reference: the label selector at `selector` picks objects of
 * the referent kind (a Service's Pods). `form` says how the API writes it,
 * `empty` what `{}` means; the counts say when matches are not enough.
 */
export const selectorReferenceSchema = z.strictObject({
  /** Field path to the selector, e.g. spec.selector or spec.podSelector. */
  selector: fieldPath,
  /** labelSelector: {matchLabels, matchExpressions}; map: a Service's plain key → value map. */
  form: z.enum(['labelSelector', 'map'], { error: "form must be 'labelSelector' or 'map'" }).default('labelSelector'),
  /** The kind it selects, in a fixed group ('' for core). */
  referent: kindRefSchema,
  /** What an empty selector matches: all (PDB, NetworkPolicy) or none, which is no reference (Service). */
  empty: z.enum(['all', 'none'], { error: "empty must be 'all' or 'none'" }).optional(),
  /** Field path to a namespaceSelector, in label form or the Prometheus Operator's {any}/{matchNames} form. */
  namespaceSelector: fieldPath.optional(),
  /**
   * How the namespace selector is written: labelSelector (`{}` is every namespace) or anyOrMatchNames (a
   * ServiceMonitor's: `{}` is its own namespace). Left out, any or matchNames in it make the second form.
   */
  namespaceSelectorForm: z
    .enum(['labelSelector', 'anyOrMatchNames'], {
      error: "namespaceSelectorForm must be 'labelSelector' or 'anyOrMatchNames'",
    })
    .optional(),
  /** Fewer Ready matches than this is NotReady (1 for a Service: no ready endpoints). */
  minReady: z.number().int().min(1).optional(),
  /** Field path to an integer the matches must reach (a PDB's minAvailable); a percentage is not checked. */
  minMatchesField: fieldPath.optional(),
  /** A selector matching nothing: block (NoMatch, stuck after the threshold) or warn (a warning only). */
  onNoMatch: z.enum(['block', 'warn'], { error: "onNoMatch must be 'block' or 'warn'" }).default('block'),
  /** What too few Ready matches means, for the message (the Service has no ready endpoints). */
  unreadyMeans: z.string().min(1).optional(),
});

/**
 * A lookup reference: the field at `path` holds a value, and the referent is
 * the object, among those `labelSelector` picks, whose `field` (decoded)
 * equals it: an Argo CD Application names its cluster Secret by the cluster's
 * name, the Secret's base64 data.name. Only the labelled objects are watched,
 * and of them only metadata and `field` are kept.
 */
export const lookupReferenceSchema = z.strictObject({
  /** Field path to the value, e.g. spec.destination.name. */
  path: fieldPath,
  lookup: z.strictObject({
    /** The kind of the candidates ('' group for core). */
    referent: kindRefSchema,
    /** The labels that mark a candidate, in kubectl form: argocd.argoproj.io/secret-type=cluster. */
    labelSelector: z
      .string()
      .regex(
        /^[A-Za-z0-9][-A-Za-z0-9_./]*(!?=|==)[-A-Za-z0-9_.]*(,[A-Za-z0-9][-A-Za-z0-9_./]*(!?=|==)[-A-Za-z0-9_.]*)*$/,
        {
          error: 'labelSelector must be key=value pairs separated by commas (argocd.argoproj.io/secret-type=cluster)',
        },
      ),
    /** The candidate's field compared with the value, e.g. data.name; the only field of theirs kept in memory. */
    field: fieldPath,
    /** base64: the field is a Secret's data, compared decoded. */
    decode: z.enum(['base64'], { error: "decode must be 'base64' or left out" }).optional(),
    /** What a candidate is, in messages: Argo CD cluster. */
    noun: z.string().min(1).optional(),
    /** How the value names it, in messages: named, with server. */
    by: z.string().min(1).optional(),
  }),
  /** Where the candidates live; default the referrer's own namespace. */
  namespace: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { error: 'namespace must be a namespace name (argocd)' })
    .optional(),
  /** Values that name no object, so are no reference (Argo CD's built-in in-cluster destination). */
  skip: z.array(z.string().min(1)).optional(),
});

export const ruleSchema = z.strictObject({
  referrer: kindRefSchema,
  references: z
    .array(z.union([referenceRuleSchema, selectorReferenceSchema, lookupReferenceSchema]))
    .min(1, { error: 'give at least one reference' }),
});

/**
 * Which referrers a convention applies to: a kind matching any listed
 * criterion. Omitted: every object it is shown. Categories come from
 * discovery; without it they match every kind.
 */
export const referrerSelectorSchema = z.strictObject({
  groups: z.array(groupName).optional(),
  /** `upbound.io` matches `upbound.io` and `ec2.aws.upbound.io`. */
  groupSuffixes: z.array(groupName).optional(),
  /** Discovery categories, e.g. Crossplane's `managed`, `composite`, `claim`. */
  categories: z
    .array(z.string().regex(/^[a-z0-9][-a-z0-9]*$/, { error: 'a category is a lowercase word (managed)' }))
    .optional(),
});

const conventionFieldName = z
  .string()
  .regex(/^[A-Za-z_$][\w$-]*Refs?$/, { error: 'field must be a field name ending in Ref or Refs (providerConfigRef)' });

export const conventionFieldSchema = z
  .strictObject({
    field: conventionFieldName,
    ...targetShape,
  })
  .superRefine(checkTarget);

/**
 * A convention: under each `under` path, every field named `*Ref` holding
 * {name} and every `*Refs` holding [{name}] is a reference. `fields` gives the
 * referent kind per field name; other such fields are reported, unresolved.
 */
export const conventionSchema = z.strictObject({
  name: z.string().min(1),
  referrers: referrerSelectorSchema.optional(),
  under: z.array(fieldPath).min(1, { error: 'give at least one path to look under, e.g. spec' }),
  fields: z.array(conventionFieldSchema).default([]),
  /** `*Ref` fields that name no dependency (back-pointers such as claimRef): neither resolved nor reported. */
  ignore: z.array(conventionFieldName).default([]),
});

const scalar = z.union([z.string(), z.number(), z.boolean()]);

const conditionPredicate = z.strictObject({
  condition: z.string().min(1),
  status: z.enum(['True', 'False', 'Unknown']).default('True'),
});
const fieldPredicate = z.strictObject({ field: fieldPath, equals: z.union([scalar, z.array(scalar).min(1)]) });

/**
 * Readiness predicate:
 *   exists                         found in the cache is enough
 *   default                        condition Ready=True, or no conditions at all
 *   {condition: T, status?: S}     condition T has status S (default True)
 *   {field: P, equals: V | [V…]}   the value at P equals V (or one of them)
 *   {all: [{condition…} | {field…}, …]}  every one holds (Argo CD: health Healthy and sync Synced)
 */
export const predicateSchema = z.union(
  [
    z.literal('exists'),
    z.literal('default'),
    conditionPredicate,
    fieldPredicate,
    z.strictObject({
      all: z.array(z.union([conditionPredicate, fieldPredicate])).min(2, { error: 'all needs two predicates or more' }),
    }),
  ],
  {
    error: "ready must be 'exists', 'default', {condition: Type}, {field: path, equals: value} or {all: [predicates]}",
  },
);
export type ReadinessPredicate = z.output<typeof predicateSchema>;

/** What refwatch knows about one referent kind. group '*' matches the kind in any group. */
export const kindInfoSchema = z.strictObject({
  group: z.union([z.literal('*'), groupName]).default(''),
  kind: kindName,
  scope: scopeSchema.optional(),
  ready: predicateSchema.optional(),
});

export const rulesDocumentSchema = z
  .strictObject({
    /** A label for messages, e.g. the pack name. */
    name: z.string().optional(),
    rules: z.array(ruleSchema).default([]),
    conventions: z.array(conventionSchema).default([]),
    kinds: z.array(kindInfoSchema).default([]),
  })
  .superRefine((doc, ctx) => {
    const seen = new Map<string, number>();
    doc.kinds.forEach((k, i) => {
      const id = `${k.kind}.${k.group}`;
      const first = seen.get(id);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['kinds', i],
          message: `kind ${k.kind} in group '${k.group}' is already described at kinds[${first}]; merge the two`,
        });
      else seen.set(id, i);
    });
  });

/** RulesDocumentInput is what a file or a pack author writes; defaults not yet applied. */
export type RulesDocumentInput = z.input<typeof rulesDocumentSchema>;
/** RulesDocument is a validated document, defaults applied. */
export type RulesDocument = z.output<typeof rulesDocumentSchema>;
export type ReferenceRuleSpec = z.output<typeof referenceRuleSchema>;
export type SelectorReferenceSpec = z.output<typeof selectorReferenceSchema>;
export type LookupReferenceSpec = z.output<typeof lookupReferenceSchema>;
export type ConventionSpec = z.output<typeof conventionSchema>;
export type ConventionFieldSpec = z.output<typeof conventionFieldSchema>;
export type ReferentSpec = z.output<typeof referentSchema>;
export type KindInfoSpec = z.output<typeof kindInfoSchema>;
export type ReferrerSelector = z.output<typeof referrerSelectorSchema>;
