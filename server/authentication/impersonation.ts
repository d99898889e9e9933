// Impersonation: a caller acting as another user with the Impersonate-User, Impersonate-Group,
// Impersonate-Uid and Impersonate-Extra-<key> headers (kube's WithImpersonation filter,
// apiserver/pkg/endpoints/filters/impersonation/impersonation.go). It runs after authentication
// and before authorization: each thing asked for is authorized for the real caller (verb
// "impersonate" on users, groups, serviceaccounts, uids, userextras/<key>) through the same
// authorizer chain as every request; then the impersonated user replaces ctx.state.user and the
// headers are removed, so everything past this point sees only the impersonated user.
import type Koa from 'koa';
import type { AuthenticatedState, UserInfo } from './user.ts';
import type { CredentialSource } from './authenticator.ts';
import { authorize, forbiddenError, type AuthorizationAttributes, type AuthorizationResult, type Authorizer } from '../authorization/authorizer.ts';
import { badRequest } from '../errors.ts';
import { isDNS1123Label, isDNS1123Subdomain } from '../validation/names.ts';

const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_HEADER_PREFIX = 'impersonate-extra-';

const AUTHENTICATION_GROUP_VERSION = 'authentication.k8s.io/v1';
const SERVICE_ACCOUNT_USERNAME_PREFIX = 'system:serviceaccount:';
const ALL_AUTHENTICATED = 'system:authenticated';
const ALL_UNAUTHENTICATED = 'system:unauthenticated';
const ANONYMOUS_USERNAME = 'system:anonymous';

/**
 * What impersonation reads of a request: its headers and, when the server keeps them, the raw
 * header list (Node's rawHeaders: name, value, name, value…), the only place where repeated
 * fields (Impersonate-Group twice) are still apart; `headers` joins them with ", ".
 */
export interface ImpersonationSource extends CredentialSource {
  readonly rawHeaders?: readonly string[];
}

/** One thing asked for, as kube's buildImpersonationRequests names it (a v1.ObjectReference). */
export interface ImpersonationRequest {
  kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  namespace: string;
  name: string;
  apiVersion: string;
  /** The extra's key, for a UserExtra. */
  fieldPath: string;
}

/** Whether the request carries any Impersonate-* header: the cheap test every request pays. */
export function asksToImpersonate(headers: ImpersonationSource['headers']): boolean {
  if (headers[USER_HEADER] !== undefined || headers[GROUP_HEADER] !== undefined || headers[UID_HEADER] !== undefined) return true;
  for (const name in headers) if (name.startsWith(EXTRA_HEADER_PREFIX)) return true;
  return false;
}

/**
 * Each value a header was sent with, in order (Go's Header[name]). Without the raw list the
 * values were joined with ", " on the way in: a list header (groups, an extra) is split back
 * there, a single-valued one (user, uid) is taken whole ("Doe, Jane" is one user).
 */
function headerValues(req: ImpersonationSource, lowerName: string, list: boolean): string[] {
  const raw = req.rawHeaders;
  if (raw) {
    const values: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i].toLowerCase() === lowerName) values.push(raw[i + 1]);
    return values;
  }
  const v = req.headers[lowerName];
  if (v === undefined) return [];
  const values = Array.isArray(v) ? v : [v];
  return list ? values.flatMap((s) => s.split(', ')) : values;
}

/** The names of the Impersonate-Extra-* headers, lower-cased, each once, in the order they came. */
function extraHeaderNames(req: ImpersonationSource): string[] {
  const names = new Set<string>();
  const raw = req.rawHeaders;
  if (raw) {
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      if (name.startsWith(EXTRA_HEADER_PREFIX)) names.add(name);
    }
  } else {
    for (const name in req.headers) if (name.startsWith(EXTRA_HEADER_PREFIX)) names.add(name);
  }
  return [...names];
}

/**
 * Go's url.PathUnescape of an extra's key (clients percent-encode keys such as
 * "example.com/scopes"); a malformed escape keeps the key as it came, as kube does.
 */
export function unescapeExtraKey(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; ) {
    if (encoded[i] === '%') {
      const hex = encoded.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return encoded;
      bytes.push(parseInt(hex, 16));
      i += 3;
      continue;
    }
    const cp = encoded.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    bytes.push(...Buffer.from(ch, 'utf8'));
    i += ch.length;
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * kube's serviceaccount.SplitUsername: the namespace and name of "system:serviceaccount:<ns>:<name>"
 * when both are valid names (a DNS-1123 label and subdomain), else undefined.
 */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USERNAME_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USERNAME_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts;
  if (isDNS1123Label(namespace).length || isDNS1123Subdomain(name).length) return undefined;
  return { namespace, name };
}

/** Go's %v of a []v1.ObjectReference: each struct's fields in order, space-separated, in braces. */
function formatRequests(requests: ImpersonationRequest[]): string {
  return `[${requests.map((r) => `{${[r.kind, r.namespace, r.name, '', r.apiVersion, '', r.fieldPath].join(' ')}}`).join(' ')}]`;
}

/**
 * The things a request asks to impersonate, in kube's order (user, groups, extras, uid); none
 * when it sends no Impersonate-* header. Groups, extras or a uid without a user are a 400.
 */
export function impersonationRequests(req: ImpersonationSource): ImpersonationRequest[] {
  const requests: ImpersonationRequest[] = [];
  const entry = (kind: ImpersonationRequest['kind'], name: string, more: Partial<ImpersonationRequest> = {}): ImpersonationRequest => ({ kind, namespace: '', name, apiVersion: '', fieldPath: '', ...more });

  // Go's Header.Get: the first value.
  const requestedUser = headerValues(req, USER_HEADER, false)[0] ?? '';
  const hasUser = requestedUser.length > 0;
  if (hasUser) {
    const sa = splitServiceAccountUsername(requestedUser);
    requests.push(sa ? entry('ServiceAccount', sa.name, { namespace: sa.namespace }) : entry('User', requestedUser));
  }

  const groups = headerValues(req, GROUP_HEADER, true);
  for (const group of groups) requests.push(entry('Group', group));

  const extraNames = extraHeaderNames(req);
  for (const headerName of extraNames) {
    const key = unescapeExtraKey(headerName.slice(EXTRA_HEADER_PREFIX.length));
    for (const value of headerValues(req, headerName, true)) requests.push(entry('UserExtra', value, { apiVersion: AUTHENTICATION_GROUP_VERSION, fieldPath: key }));
  }

  const requestedUid = headerValues(req, UID_HEADER, false)[0] ?? '';
  if (requestedUid.length > 0) requests.push(entry('UID', requestedUid, { apiVersion: AUTHENTICATION_GROUP_VERSION }));

  if ((groups.length > 0 || extraNames.length > 0 || requestedUid.length > 0) && !hasUser) {
    throw badRequest(`requested ${formatRequests(requests)} without impersonating a user`);
  }
  return requests;
}

/** The authorization question one impersonation request asks about the real caller. */
export function impersonationAttributes(requestor: UserInfo, r: ImpersonationRequest): AuthorizationAttributes {
  const [apiGroup, apiVersion] = r.apiVersion.includes('/') ? r.apiVersion.split('/') : ['', r.apiVersion];
  const attrs: AuthorizationAttributes = { user: requestor, verb: 'impersonate', isResourceRequest: true, path: '', apiGroup, apiVersion, resource: '', subresource: '', namespace: r.namespace, name: r.name };
  switch (r.kind) {
    case 'ServiceAccount':
      attrs.resource = 'serviceaccounts';
      break;
    case 'User':
      attrs.resource = 'users';
      break;
    case 'Group':
      attrs.resource = 'groups';
      break;
    case 'UserExtra':
      attrs.resource = 'userextras';
      attrs.subresource = r.fieldPath;
      break;
    case 'UID':
      attrs.resource = 'uids';
      break;
  }
  return attrs;
}

/**
 * The user the requests make: the name (a service account's full user name), the groups asked
 * for (a service account's own groups when none are), extras and uid; then kube's rule for the
 * all-users groups: system:authenticated is added unless the groups already hold it or
 * system:unauthenticated, and system:anonymous gets system:unauthenticated instead.
 */
export function impersonatedUser(requests: ImpersonationRequest[]): UserInfo {
  const groupsSpecified = requests.some((r) => r.kind === 'Group');
  let name = '';
  let groups: string[] = [];
  let uid = '';
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    switch (r.kind) {
      case 'ServiceAccount':
        name = `${SERVICE_ACCOUNT_USERNAME_PREFIX}${r.namespace}:${r.name}`;
        if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace}`];
        break;
      case 'User':
        name = r.name;
        break;
      case 'Group':
        groups.push(r.name);
        break;
      case 'UserExtra':
        (extra[r.fieldPath] ??= []).push(r.name);
        break;
      case 'UID':
        uid = r.name;
        break;
    }
  }
  if (name !== ANONYMOUS_USERNAME) {
    if (!groups.includes(ALL_AUTHENTICATED) && !groups.includes(ALL_UNAUTHENTICATED)) groups.push(ALL_AUTHENTICATED);
  } else if (!groups.includes(ALL_UNAUTHENTICATED)) {
    groups.push(ALL_UNAUTHENTICATED);
  }
  const user: UserInfo = { name, groups, extra };
  if (uid) user.uid = uid;
  return user;
}

/** Removes the Impersonate-* headers, so nothing past impersonation (a proxy, a webhook) sees them. */
function clearImpersonationHeaders(req: ImpersonationSource): void {
  const headers = req.headers as Record<string, string | string[] | undefined>;
  for (const name of Object.keys(headers)) {
    if (name === USER_HEADER || name === GROUP_HEADER || name === UID_HEADER || name.startsWith(EXTRA_HEADER_PREFIX)) delete headers[name];
  }
}

/**
 * The middleware: right after authentication. A request without Impersonate-* headers passes
 * through untouched; otherwise every request is authorized in turn for the real caller (the
 * first refusal is a 403 naming it), and the impersonated user becomes ctx.state.user.
 */
export function impersonationMiddleware(authorizers: readonly Authorizer[]): Koa.Middleware<AuthenticatedState> {
  return (ctx, next) => {
    const req = ctx.req as ImpersonationSource;
    if (!asksToImpersonate(req.headers)) return next();
    const requests = impersonationRequests(req);
    if (requests.length === 0) return next(); // an empty Impersonate-User alone asks for nothing
    const requestor = ctx.state.user;
    const impersonate = () => {
      ctx.state.user = impersonatedUser(requests);
      clearImpersonationHeaders(req);
      return next();
    };
    // Each request in turn; synchronous while the chain answers at once (a webhook answers later).
    const check = (from: number): ReturnType<typeof next> => {
      for (let i = from; i < requests.length; i++) {
        const attrs = impersonationAttributes(requestor, requests[i]);
        const result = authorize(authorizers, attrs);
        // kube: an error, or anything but allow, is a 403 naming what was refused.
        const refuse = (r: AuthorizationResult) => {
          if (r.error || r.decision !== 'allow') throw forbiddenError(attrs, r.reason);
        };
        if (result instanceof Promise) return result.then((r) => (refuse(r), check(i + 1)));
        refuse(result);
      }
      return impersonate();
    };
    return check(0);
  };
}
