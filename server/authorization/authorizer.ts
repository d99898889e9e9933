// Authorization: a chain of authorizers, each allowing, denying or having no opinion about
// (user, verb, resource or path), with a reason (kube's authorizer.Authorizer and its union,
// apiserver/pkg/authorization/union). The first decision wins; no decision means 403, whose
// message carries the reasons (responsewriters.Forbidden). The chain is built from
// --authorization-mode in modes.ts; RBAC is rbac/.
import { aggregateErrors } from '../go/errors.ts';
import type Koa from 'koa';
import type { AuthenticatedState, UserInfo } from '../authentication/user.ts';
import { ApiError, internalError } from '../errors.ts';
import { goQuote } from '../go/strconv.ts';
import { parseFieldRequirements, parseLabelRequirements, type FieldRequirement, type LabelRequirement } from '../validation/selectors.ts';

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
  /**
   * kube's GetFieldSelector() (AuthorizeWithSelectors): the requirements of the fieldSelector a
   * list, watch or deletecollection names (absent: none, or one requiring nothing), and why it
   * did not parse (then no requirements). An access review's may have both: what parsed of it.
   */
  fieldSelectorRequirements?: readonly FieldRequirement[];
  fieldSelectorParsingError?: string;
  /** GetLabelSelector(): the same for the labelSelector. */
  labelSelectorRequirements?: readonly LabelRequirement[];
  labelSelectorParsingError?: string;
}

export type Decision = 'allow' | 'deny' | 'noopinion';

/**
 * A decision and why (kube's (Decision, reason string, error)); the reason may be empty. An error
 * (an authorizer that could not decide: a webhook down) makes a refused request a 500, as kube's
 * WithAuthorization answers, and is a review's evaluationError.
 */
export interface AuthorizationResult {
  decision: Decision;
  reason: string;
  error?: string;
}

/** What one authorizer answers: a bare Decision is a decision without a reason. */
export type AuthorizerAnswer = Decision | AuthorizationResult;

/** What a rule resolver knows a user may do in a namespace (kube's RuleResolver.RulesFor). */
export interface RulesResult {
  resourceRules: ResourceRuleInfo[];
  nonResourceRules: NonResourceRuleInfo[];
  /** The list may leave out what an authorizer cannot enumerate (a webhook, the Node authorizer). */
  incomplete: boolean;
  /** Errors met while resolving (a binding to a missing role), already formatted; "" when none. */
  evaluationError: string;
}

export interface ResourceRuleInfo {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
}

export interface NonResourceRuleInfo {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface Authorizer {
  name: string;
  /**
   * A bare Decision is a decision without a reason. Authorizers that decide from memory (RBAC)
   * answer at once; one that must ask elsewhere (a webhook) answers with a promise.
   */
  authorize(a: AuthorizationAttributes): AuthorizerAnswer | Promise<AuthorizerAnswer>;
  /** Authorizers that can list what they allow (RBAC, AlwaysAllow, AlwaysDeny) answer SelfSubjectRulesReview. */
  rulesFor?(user: UserInfo, namespace: string): RulesResult;
}

/** system:masters may do anything (kube's privileged groups authorizer, before the chain; no rule resolver). */
export const systemMastersAuthorizer: Authorizer = {
  name: 'system:masters',
  authorize: (a) => (a.user.groups.includes('system:masters') ? 'allow' : 'noopinion'),
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

/**
 * The 403 Status for a refused request (apierrors.NewForbidden: details name the resource, group
 * and name). The authorizers' reason, when there is one, follows the message after ": " (not
 * sanitized: kube escapes only its own part).
 */
export function forbiddenError(a: AuthorizationAttributes, reason = ''): ApiError {
  const message = reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a);
  return new ApiError(403, 'Forbidden', message, a.isResourceRequest ? { name: a.name || undefined, group: a.apiGroup || undefined, kind: a.resource } : {});
}

/**
 * Asks the chain (kube's unionAuthzHandler): the first authorizer that allows or denies decides
 * with its reason (and its error); when none does, the reasons of those that gave one, joined by
 * newlines, and their errors aggregated. Synchronous while every authorizer asked answers at once
 * (RBAC's path allocates no promise); a promise from the first one that does not.
 */
export function authorize(authorizers: readonly Authorizer[], a: AuthorizationAttributes): AuthorizationResult | Promise<AuthorizationResult> {
  // Kept in locals, so the synchronous path allocates only the lists it fills.
  let reasons: string[] | undefined;
  let errors: string[] | undefined;
  for (let i = 0; i < authorizers.length; i++) {
    const r = authorizers[i].authorize(a);
    if (r instanceof Promise) return authorizeAsync(authorizers, a, i, r, { reasons, errors });
    if (typeof r === 'string') {
      if (r !== 'noopinion') return { decision: r, reason: '' };
      continue;
    }
    if (r.error) (errors ??= []).push(r.error);
    if (r.decision !== 'noopinion') return r;
    if (r.reason) (reasons ??= []).push(r.reason);
  }
  return unionResult({ reasons, errors });
}

/** The reasons and errors of the authorizers that had no opinion so far. */
interface UnionState {
  reasons: string[] | undefined;
  errors: string[] | undefined;
}

/** One authorizer's answer after a promise: the chain's result if it decided, else undefined (its reason and error noted). */
function unionStep(r: AuthorizerAnswer, union: UnionState): AuthorizationResult | undefined {
  if (typeof r === 'string') return r === 'noopinion' ? undefined : { decision: r, reason: '' };
  if (r.error) (union.errors ??= []).push(r.error);
  if (r.decision !== 'noopinion') return r;
  if (r.reason) (union.reasons ??= []).push(r.reason);
  return undefined;
}

/** No decision: the reasons joined by newlines, the errors aggregated. */
function unionResult(union: UnionState): AuthorizationResult {
  const result: AuthorizationResult = { decision: 'noopinion', reason: union.reasons ? union.reasons.join('\n') : '' };
  if (union.errors) result.error = aggregateErrors(union.errors);
  return result;
}

/** The rest of the chain, from the authorizer at `from` whose answer is `pending`. */
async function authorizeAsync(authorizers: readonly Authorizer[], a: AuthorizationAttributes, from: number, pending: Promise<AuthorizerAnswer>, union: UnionState): Promise<AuthorizationResult> {
  const first = unionStep(await pending, union);
  if (first) return first;
  for (let i = from + 1; i < authorizers.length; i++) {
    const decided = unionStep(await authorizers[i].authorize(a), union);
    if (decided) return decided;
  }
  return unionResult(union);
}

/**
 * What the chain's rule resolvers say a user may do (kube's unionAuthzRulesHandler): their
 * rules together, incomplete if any is, their errors aggregated.
 */
export function rulesFor(authorizers: readonly Authorizer[], user: UserInfo, namespace: string): RulesResult {
  const out: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' };
  const errors: string[] = [];
  for (const z of authorizers) {
    if (!z.rulesFor) continue;
    const r = z.rulesFor(user, namespace);
    out.resourceRules.push(...r.resourceRules);
    out.nonResourceRules.push(...r.nonResourceRules);
    if (r.incomplete) out.incomplete = true;
    if (r.evaluationError) errors.push(r.evaluationError);
  }
  out.evaluationError = aggregateErrors(errors);
  return out;
}


/**
 * What authorization reads of the request info http/ parsed (kube's RequestInfo, of which
 * http/request-info.ts's is a superset): authorization needs nothing from http/.
 */
export type RequestAttributes = Pick<AuthorizationAttributes, 'isResourceRequest' | 'path' | 'verb' | 'apiGroup' | 'apiVersion' | 'namespace' | 'resource' | 'subresource' | 'name'>;

/** What authorization reads from a request's state: who is calling, and what they ask for. */
type AuthorizingState = AuthenticatedState & { requestInfo: RequestAttributes; authorization?: AuthorizationResult };

/** The verbs whose selectors a request is authorized with (kube's verbsWithSelectors). */
const VERBS_WITH_SELECTORS = new Set(['list', 'watch', 'deletecollection']);

/** /api/v1/watch/... and /apis/g/v/watch/...: the deprecated verb-via-path form, whose selectors kube does not authorize with. */
function verbViaPathPrefix(path: string): boolean {
  const parts = path.split('/').filter((p) => p !== '');
  return parts[parts[0] === 'api' ? 2 : 3] === 'watch';
}

/** path.IsValidPathSegmentName: a name that may stand in a URL path. */
const isValidPathSegmentName = (name: string): boolean => name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');

/**
 * What kube's RequestInfo and GetAuthorizerAttributes take from a collection request's query: a
 * list or watch whose fieldSelector requires `metadata.name=<x>` is about the object x (its name
 * is the request's, when it may stand in a path); a list, watch or deletecollection is
 * authorized with its field and label selectors' requirements, or the error parsing them.
 */
function collectionAttributes(a: AuthorizationAttributes, query: URLSearchParams, viaPath: boolean): void {
  const fieldSelector = query.get('fieldSelector');
  let fields: FieldRequirement[] | undefined;
  let fieldError: string | undefined;
  if (fieldSelector) {
    try {
      fields = parseFieldRequirements(fieldSelector);
    } catch (e) {
      fieldError = (e as Error).message;
    }
  }
  if (!viaPath && !a.name && (a.verb === 'list' || a.verb === 'watch')) {
    const name = fields?.find((r) => r.field === 'metadata.name' && r.op === '=')?.value;
    if (name !== undefined && isValidPathSegmentName(name)) a.name = name;
  }
  if (viaPath || !VERBS_WITH_SELECTORS.has(a.verb)) return;
  if (fieldError !== undefined) a.fieldSelectorParsingError = fieldError;
  else if (fields?.length) a.fieldSelectorRequirements = fields;
  const labelSelector = query.get('labelSelector');
  if (labelSelector) {
    try {
      const labels = parseLabelRequirements(labelSelector);
      if (labels.length) a.labelSelectorRequirements = labels;
    } catch (e) {
      a.labelSelectorParsingError = (e as Error).message;
    }
  }
}

export function authorizationMiddleware(authorizers: Authorizer[]): Koa.Middleware<AuthorizingState> {
  // Not async: RBAC's decision is synchronous, and the chain's promise is passed on as it is.
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
    // Only a GET or DELETE of a collection with a query has selectors to read.
    if (ri.isResourceRequest && ctx.querystring && (attrs.verb === 'list' || attrs.verb === 'watch' || attrs.verb === 'deletecollection')) {
      collectionAttributes(attrs, new URLSearchParams(ctx.querystring), verbViaPathPrefix(ri.path));
    }
    const result = authorize(authorizers, attrs);
    // (kept on the state for the audit event's authorization.k8s.io/decision and reason)
    if (result instanceof Promise) return result.then((r) => ((ctx.state.authorization = r), r.decision === 'allow' ? next() : refuse(attrs, r)));
    ctx.state.authorization = result;
    return result.decision === 'allow' ? next() : refuse(attrs, result);
  };
}

/** kube's WithAuthorization: a request not allowed is a 500 when an authorizer erred, else a 403. */
function refuse(attrs: AuthorizationAttributes, r: AuthorizationResult): never {
  if (r.error) throw internalError(r.error);
  throw forbiddenError(attrs, r.reason);
}
