// kube's authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go), which admission policies
// declare as `authorizer` (and `authorizer.requestResource`): authorizer.path(p).check(verb),
// authorizer.group(g).resource(r)[.subresource(s)][.namespace(n)][.name(n)].check(verb),
// authorizer.serviceAccount(ns, name) for another identity, and the Decision's allowed(),
// reason(), errored() and error(). The values are marked maps (bufbuild-gaps/opaque-values.ts),
// which hold CEL values only: the caller's check function (its server's authorizer chain) is
// registered once and named in the value by its id, the user travels as JSON.
import { celMethod } from '@bufbuild/cel';
import { expectTag, tagged, tagOf } from './bufbuild-gaps/opaque-values.ts';
import { BOOL, MAP, STRING } from './values.ts';

/** What one check asks (kube's authorizer.AttributesRecord, the part the library fills). */
export interface AuthzCheckAttributes {
  user: { name: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
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

/** The answer of a check: a decision ('allow', 'deny', 'noopinion'), its reason and an error. */
export interface AuthzCheckResult {
  decision: string;
  reason: string;
  error?: string;
}

export type AuthzCheck = (a: AuthzCheckAttributes) => AuthzCheckResult;

/** A marked map (what tagged() makes). */
type Opaque = ReturnType<typeof tagged>;

const CHECK = '\u0000check';
const USER = '\u0000user';

/** The registered check functions by id (one per server's policy plugin: a handful per process). */
const checks = new Map<string, AuthzCheck>();

/** Registers a check function; its id is what authorizerValue takes. */
export function registerAuthzCheck(check: AuthzCheck): string {
  const id = String(checks.size + 1);
  checks.set(id, check);
  return id;
}

/**
 * The `authorizer` value for a user: `requestResource` is the request's own resource (kube's
 * NewResourceAuthorizerVal), absent when there is none.
 */
export function authorizerValue(checkId: string, user: AuthzCheckAttributes['user'], requestResource?: { group: string; version: string; resource: string; subresource: string; namespace: string; name: string }): Opaque {
  const a = tagged('authorizer', { [CHECK]: checkId, [USER]: JSON.stringify(user) });
  if (requestResource) a.set('requestResource', resourceCheck(a, requestResource.group, requestResource.version, requestResource.resource, requestResource.subresource, requestResource.namespace, requestResource.name));
  return a;
}

function resourceCheck(authorizer: Opaque, group: string, version: string, resource: string, subresource: string, namespace: string, name: string): Opaque {
  return tagged('resourcecheck', { authorizer, group, version, resource, subresource, namespace, name });
}

function decision(r: AuthzCheckResult): Opaque {
  return tagged('decision', { decision: r.decision, reason: r.reason, error: r.error ?? '' });
}

function run(authorizer: Opaque, attrs: Omit<AuthzCheckAttributes, 'user'>): Opaque {
  const check = checks.get(authorizer.get(CHECK) as string);
  if (!check) return decision({ decision: 'noopinion', reason: '', error: 'no authorizer' });
  const user = JSON.parse(authorizer.get(USER) as string) as AuthzCheckAttributes['user'];
  return decision(check({ user, ...attrs }));
}

const withField = (rc: Opaque, field: string, value: string): Opaque => {
  const next = new Map(rc);
  next.set(field, value);
  return next;
};

export const AUTHZ_LIBRARY = [
  celMethod('path', MAP, [STRING], MAP, function (path: string) {
    return tagged('pathcheck', { authorizer: expectTag(this, 'authorizer', 'path'), path });
  }),
  celMethod('group', MAP, [STRING], MAP, function (group: string) {
    return tagged('groupcheck', { authorizer: expectTag(this, 'authorizer', 'group'), group });
  }),
  celMethod('serviceAccount', MAP, [STRING, STRING], MAP, function (namespace: string, name: string) {
    const a = expectTag(this, 'authorizer', 'serviceAccount');
    return tagged('authorizer', { [CHECK]: a.get(CHECK), [USER]: JSON.stringify({ name: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] }) });
  }),
  celMethod('resource', MAP, [STRING], MAP, function (resource: string) {
    const g = expectTag(this, 'groupcheck', 'resource');
    return resourceCheck(g.get('authorizer'), g.get('group'), '*', resource, '', '', '');
  }),
  celMethod('subresource', MAP, [STRING], MAP, function (v: string) {
    return withField(expectTag(this, 'resourcecheck', 'subresource'), 'subresource', v);
  }),
  celMethod('namespace', MAP, [STRING], MAP, function (v: string) {
    return withField(expectTag(this, 'resourcecheck', 'namespace'), 'namespace', v);
  }),
  celMethod('name', MAP, [STRING], MAP, function (v: string) {
    return withField(expectTag(this, 'resourcecheck', 'name'), 'name', v);
  }),
  celMethod('check', MAP, [STRING], MAP, function (verb: string) {
    if (tagOf(this) === 'pathcheck') {
      const m = expectTag(this, 'pathcheck', 'check');
      return run(m.get('authorizer'), { verb, isResourceRequest: false, path: m.get('path'), apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' });
    }
    const rc = expectTag(this, 'resourcecheck', 'check');
    return run(rc.get('authorizer'), { verb, isResourceRequest: true, path: '', apiGroup: rc.get('group'), apiVersion: rc.get('version'), resource: rc.get('resource'), subresource: rc.get('subresource'), namespace: rc.get('namespace'), name: rc.get('name') });
  }),
  celMethod('allowed', MAP, [], BOOL, function () {
    return expectTag(this, 'decision', 'allowed').get('decision') === 'allow';
  }),
  celMethod('reason', MAP, [], STRING, function () {
    return expectTag(this, 'decision', 'reason').get('reason');
  }),
  celMethod('errored', MAP, [], BOOL, function () {
    return expectTag(this, 'decision', 'errored').get('error') !== '';
  }),
  celMethod('error', MAP, [], STRING, function () {
    return expectTag(this, 'decision', 'error').get('error');
  }),
];
