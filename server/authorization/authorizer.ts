// Authorization: a chain of authorizers, each allowing, denying or having no opinion about
// (user, verb, resource or path). The first decision wins; no decision means 403.
// RBAC joins the chain in its own issue.
import type Koa from 'koa';
import type { AuthenticatedState, UserInfo } from '../authentication/user.ts';
import { ApiError } from '../errors.ts';

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

export function forbiddenMessage(a: AuthorizationAttributes): string {
  if (!a.isResourceRequest) return `forbidden: User "${a.user.name}" cannot ${a.verb} path "${a.path}"`;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const what = a.name ? `${a.resource}${a.apiGroup ? '.' + a.apiGroup : ''} "${a.name}"` : `${a.resource}${a.apiGroup ? '.' + a.apiGroup : ''}`;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return `${what} is forbidden: User "${a.user.name}" cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}"${scope}`;
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
    for (const z of authorizers) {
      const d = z.authorize(attrs);
      if (d === 'allow') return next();
      if (d === 'deny') break;
    }
    throw new ApiError(403, 'Forbidden', forbiddenMessage(attrs), ri.isResourceRequest ? { name: ri.name || undefined, group: ri.apiGroup || undefined, kind: ri.resource } : {});
  };
}
