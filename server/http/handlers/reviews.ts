// authentication.k8s.io/v1 TokenReview and SelfSubjectReview: create-only resources that are
// never stored (kube's pkg/registry/authentication/tokenreview and selfsubjectreview REST). A POST
// answers 201 with the review filled in; they have no other verb (index.ts routes them), and they
// are in the catalog only so that discovery and OpenAPI show them with the verb "create".
import type { Socket } from 'node:net';
import { badRequest, internalError } from '../../errors.ts';
import { isPlainObject } from '../../util/json.ts';
import type { ResourceInfo } from '../../schema/types.ts';
import { authenticateToken, bearerToken } from '../../authentication/token.ts';
import type { UserInfo } from '../../authentication/user.ts';
import { readObjectBody } from './body.ts';
import { requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest, TokenReviewer } from './request.ts';

const GROUP = 'authentication.k8s.io';
const API_VERSION = `${GROUP}/v1`;

/** The catalog entries of the review resources (kube's discovery: cluster-scoped, verbs [create]). */
export function reviewResources(): ResourceInfo[] {
  const review = (resource: string, kind: string): ResourceInfo => ({
    group: GROUP,
    version: 'v1',
    resource,
    kind,
    listKind: `${kind}List`,
    singularName: kind.toLowerCase(),
    namespaced: false,
    verbs: ['create'],
    definition: `io.k8s.api.authentication.v1.${kind}`,
  });
  return [review('selfsubjectreviews', 'SelfSubjectReview'), review('tokenreviews', 'TokenReview')];
}

/** Whether a catalog entry is one of these never-stored reviews. */
export function isReview(info: ResourceInfo): boolean {
  return info.group === GROUP && (info.resource === 'tokenreviews' || info.resource === 'selfsubjectreviews');
}

/** kube's user.Info as authentication.k8s.io/v1 UserInfo (empty fields left out, extra always a map). */
function userInfoJson(user: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: user.name };
  if (user.uid) out.uid = user.uid;
  if (user.groups.length) out.groups = [...user.groups];
  const extra = user.extra ?? {};
  if (Object.keys(extra).length) out.extra = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, [...v]]));
  return out;
}

/** The body's apiVersion and kind, as the generic create checks them. */
function checkKind(body: unknown, kind: string): Record<string, unknown> {
  if (!isPlainObject(body)) throw badRequest('the body of the request was not a JSON object');
  if (body.apiVersion !== undefined && body.apiVersion !== API_VERSION) throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${API_VERSION})`);
  if (body.kind !== undefined && body.kind !== kind) throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${kind})`);
  return body;
}

/** POST selfsubjectreviews: who the caller is, as authentication named them. */
export async function createSelfSubjectReview({ ctx, info, deps }: ResourceRequest): Promise<void> {
  const rc = requestContext(ctx, 'CreateOptions');
  checkKind(await readObjectBody(ctx, info, info.definition, rc, deps.model), info.kind);
  const review = {
    kind: info.kind,
    apiVersion: API_VERSION,
    metadata: { creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } as Record<string, unknown>,
    status: { userInfo: userInfoJson(ctx.state.user) },
  };
  return respondObject(ctx, info, review, 201, rc);
}

/** A request that carries only the token, as kube's TokenReview builds one. */
function tokenOnlyRequest(token: string): { headers: Record<string, string>; socket: Socket } {
  return { headers: { authorization: `Bearer ${token}` }, socket: {} as Socket };
}

/**
 * POST tokenreviews: spec.token through the token authenticators, for spec.audiences (the API
 * server's own when none are given). A token nobody accepts is a review that says so (status.error),
 * not an error of the request.
 */
export function tokenReviewHandler(reviewer: TokenReviewer | undefined) {
  return async ({ ctx, info, deps }: ResourceRequest): Promise<void> => {
    const rc = requestContext(ctx, 'CreateOptions');
    const body = checkKind(await readObjectBody(ctx, info, info.definition, rc, deps.model), info.kind);
    const spec = isPlainObject(body.spec) ? body.spec : {};
    const token = typeof spec.token === 'string' ? spec.token : '';
    if (token === '') throw badRequest('token is required for TokenReview in authentication');
    const asked = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
    const audiences = asked.length ? asked : [...(reviewer?.apiAudiences ?? [])];

    const status: Record<string, unknown> = {};
    // The token as the Authorization header reads it (kube sends it through a bearer-token request).
    const bearer = bearerToken(tokenOnlyRequest(token));
    if (bearer !== undefined && reviewer && reviewer.authenticators.length) {
      const r = await authenticateToken(reviewer.authenticators, bearer, audiences.length ? audiences : undefined);
      if (r && 'user' in r) {
        if (audiences.length && !(r.audiences ?? []).some((a) => audiences.includes(a))) throw internalError('error validating audiences');
        const groups = r.user.groups.includes('system:authenticated') ? r.user.groups : [...r.user.groups, 'system:authenticated'];
        status.authenticated = true;
        status.user = userInfoJson({ ...r.user, groups });
        if (r.audiences?.length) status.audiences = [...r.audiences];
        if (r.warnings) rc.warnings.push(...r.warnings);
      } else {
        status.user = {};
        if (r) status.error = r.error;
      }
    } else {
      status.user = {};
    }
    const metadata = isPlainObject(body.metadata) ? { ...body.metadata } : {};
    if (metadata.creationTimestamp === undefined) metadata.creationTimestamp = null;
    const review = { kind: info.kind, apiVersion: API_VERSION, metadata, spec, status };
    return respondObject(ctx, info, review, 201, rc);
  };
}
