import { apiGroup } from './resources';
import { badRequest, methodNotAllowed, resourceNotFound } from './status';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';

const REVIEWS: Record<string, string> = {
  selfsubjectaccessreviews: 'SelfSubjectAccessReview',
  selfsubjectrulesreviews: 'SelfSubjectRulesReview',
};

/** The group's entry in /apis: the embedded server serves its self reviews (`kubectl auth can-i`). */
export const AUTHORIZATION_API_GROUP = { name: AUTHORIZATION_GROUP, versions: ['v1'] };

/**
 * authorization answers authorization.k8s.io/v1: discovery, and the SelfSubjectAccessReview and
 * SelfSubjectRulesReview that `kubectl auth can-i` creates. The embedded server authorizes every request
 * (a token, when set, only authenticates), so every review is allowed, and the rules are everything.
 */
export async function authorization(
  method: string,
  segments: string[],
  body: () => Promise<Record<string, unknown>>,
): Promise<{ code: number; body: unknown }> {
  const [, , version, resource, ...rest] = segments;
  if (version === undefined) {
    if (method !== 'GET') throw methodNotAllowed();
    return { code: 200, body: apiGroup(AUTHORIZATION_API_GROUP) };
  }
  if (version !== 'v1') throw resourceNotFound();
  if (resource === undefined) {
    if (method !== 'GET') throw methodNotAllowed();
    return {
      code: 200,
      body: {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: `${AUTHORIZATION_GROUP}/v1`,
        resources: Object.entries(REVIEWS).map(([name, kind]) => ({
          name,
          singularName: kind.toLowerCase(),
          namespaced: false,
          kind,
          verbs: ['create'],
        })),
      },
    };
  }
  const kind = REVIEWS[resource];
  if (!kind || rest.length > 0) throw resourceNotFound();
  if (method !== 'POST') throw methodNotAllowed();
  const review = await body();
  if (review.kind !== undefined && review.kind !== kind)
    throw badRequest(`the body is a ${String(review.kind)}, not a ${kind}: POST it to its own resource`);
  const spec = (review.spec ?? {}) as Record<string, unknown>;
  const status =
    kind === 'SelfSubjectAccessReview'
      ? { allowed: true, reason: 'the embedded API server authorizes every request' }
      : {
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          incomplete: false,
        };
  return {
    code: 201,
    body: {
      kind,
      apiVersion: `${AUTHORIZATION_GROUP}/v1`,
      metadata: { creationTimestamp: null },
      spec,
      status,
    },
  };
}
