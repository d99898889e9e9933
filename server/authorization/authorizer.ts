// Authorization: a chain of authorizers, each allowing, denying or having no opinion about
// (user, verb, resource or path). The first decision wins; no decision means 403.
// RBAC joins the chain in its own issue.
import type Koa from 'koa';
import type { AuthenticatedState, UserInfo } from '../authentication/user.ts';
import { ApiError } from '../errors.ts';
import { goQuote } from '../go/strconv.ts';

export interface AuthorizationAttributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

export type Decision = 'allow' | 'deny' | 'noopinion';

export interface Authorizer {
  name: string;
  authorize(a: AuthorizationAttributes): Decision;
}

/** system:masters may do anything (kube's privileged group). */
export const systemMastersAuthorizer: Authorizer = {
  name: 'system:masters',
  authorize: (a) => (a.user.groups.includes('system:masters') ? 'allow' : 'noopinion'),
};

const PUBLIC_PATHS = ['/healthz', '/livez', '/readyz', '/version'];
const DISCOVERY_PATHS = ['/api', '/apis', '/openapi', '/.well-known/openid-configuration', '/openid/v1/jwks'];

function underAny(path: string, prefixes: string[]): boolean {
  return prefixes.some((p) => path === p || path === p + '/' || path.startsWith(p + '/'));
}

/**
 * What kube's default roles grant everyone: health and version to all, discovery to the
 * authenticated, and system:basic-user's SelfSubjectReview (`kubectl auth whoami`) to the authenticated.
 */
export const publicInfoAuthorizer: Authorizer = {
  name: 'public-info',
  authorize(a) {
    if (a.isResourceRequest) {
      const selfReview = a.verb === 'create' && a.apiGroup === 'authentication.k8s.io' && a.resource === 'selfsubjectreviews' && !a.subresource;
      return selfReview && a.user.groups.includes('system:authenticated') ? 'allow' : 'noopinion';
    }
    if (a.verb !== 'get') return 'noopinion';
    if (underAny(a.path, PUBLIC_PATHS)) return 'allow';
    if (a.user.groups.includes('system:authenticated') && underAny(a.path, DISCOVERY_PATHS)) return 'allow';
    return 'noopinion';
  },
};

// kube's responsewriters sanitizer: a message never looks like HTML.
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** kube's ForbiddenStatusError message: what was refused (NewForbidden's prefix), then why. */
export function forbiddenMessage(a: AuthorizationAttributes): string {
  const reason = forbiddenReason(a).replace(/[&<>]/g, (c) => HTML_ESCAPES[c]);
  if (!a.isResourceRequest) return `forbidden: ${reason}`;
  const resource = `${a.resource}${a.apiGroup ? '.' + a.apiGroup : ''}`;
  return a.name ? `${resource} ${goQuote(a.name)} is forbidden: ${reason}` : `${resource} is forbidden: ${reason}`;
}

/** responsewriters.forbiddenMessage: who cannot do what, with Go's %q quoting. */
function forbiddenReason(a: AuthorizationAttributes): string {
  if (!a.isResourceRequest) return `User ${goQuote(a.user.name)} cannot ${a.verb} path ${goQuote(a.path)}`;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${goQuote(a.namespace)}` : 'at the cluster scope';
  return `User ${goQuote(a.user.name)} cannot ${a.verb} resource ${goQuote(res)} in API group ${goQuote(a.apiGroup)} ${scope}`;
}

/** The 403 Status for a refused request (apierrors.NewForbidden: details name the resource, group and name). */
export function forbiddenError(a: AuthorizationAttributes): ApiError {
  return new ApiError(403, 'Forbidden', forbiddenMessage(a), a.isResourceRequest ? { name: a.name || undefined, group: a.apiGroup || undefined, kind: a.resource } : {});
}

/** Asks the chain: the first authorizer that allows or denies decides; none deciding is no opinion. */
export function authorize(authorizers: readonly Authorizer[], a: AuthorizationAttributes): Decision {
  for (const z of authorizers) {
    const d = z.authorize(a);
    if (d !== 'noopinion') return d;
  }
  return 'noopinion';
}

/**
 * What authorization reads of the request info http/ parsed (kube's RequestInfo, of which
 * http/request-info.ts's is a superset): authorization needs nothing from http/.
 */
export type RequestAttributes = Pick<AuthorizationAttributes, 'isResourceRequest' | 'path' | 'verb' | 'apiGroup' | 'apiVersion' | 'namespace' | 'resource' | 'subresource' | 'name'>;

/** What authorization reads from a request's state: who is calling, and what they ask for. */
type AuthorizingState = AuthenticatedState & { requestInfo: RequestAttributes };

export function authorizationMiddleware(authorizers: Authorizer[]): Koa.Middleware<AuthorizingState> {
  // Not async: the decision is synchronous, and the chain's promise is passed on as it is.
  return (ctx, next) => {
    const ri = ctx.state.requestInfo;
    const attrs: AuthorizationAttributes = {
      user: ctx.state.user,
      verb: ri.isResourceRequest ? ri.verb : ctx.method === 'HEAD' ? 'get' : ctx.method.toLowerCase(),
      isResourceRequest: ri.isResourceRequest,
      path: ri.path,
      apiGroup: ri.apiGroup,
      apiVersion: ri.apiVersion,
      resource: ri.resource,
      subresource: ri.subresource,
      namespace: ri.namespace,
      name: ri.name,
    };
    if (authorize(authorizers, attrs) === 'allow') return next();
    throw forbiddenError(attrs);
  };
}
