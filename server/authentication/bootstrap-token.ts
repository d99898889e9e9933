// Bootstrap tokens (`<id>.<secret>`, what `kubeadm token create` prints and a joining kubelet
// presents), as kube's plugin/pkg/auth/authenticator/token/bootstrap authenticates them, and the
// reading of their Secrets that k8s.io/cluster-bootstrap (token/api, token/util, util/secrets)
// shares with the token cleaner and the bootstrap signer (server/controllers/).
//
// A token is a Secret of type `bootstrap.kubernetes.io/token` named `bootstrap-token-<id>` in
// kube-system. It authenticates as `system:bootstrap:<id>` in `system:bootstrappers` (plus its
// `auth-extra-groups`) while its `token-secret` matches, it is marked
// `usage-bootstrap-authentication: "true"`, its `expiration` has not passed and it is not being
// deleted; one extra group outside kube's `system:bootstrappers:` pattern refuses the whole token
// (kube's GetGroups errs; the group is not just dropped). A token of the right shape whose Secret
// fails any of these gets no opinion (kube logs
// why at V(3)); the union then answers 401 "invalid bearer token", as it does for any token no
// one knows. Like static tokens, bootstrap tokens are audience-agnostic (kube's
// WrapAudienceAgnosticToken): they carry the API server's own audiences.
import { timingSafeEqual } from 'node:crypto';
import { parseRFC3339 } from '../go/time.ts';
import type { AuthResult } from './authenticator.ts';
import type { TokenAuthenticator } from './token.ts';

/** k8s.io/cluster-bootstrap/token/api's names. */
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_TOKEN_NAMESPACE = 'kube-system';
export const BOOTSTRAP_TOKEN_ID_KEY = 'token-id';
export const BOOTSTRAP_TOKEN_SECRET_KEY = 'token-secret';
export const BOOTSTRAP_TOKEN_EXPIRATION_KEY = 'expiration';
export const BOOTSTRAP_TOKEN_EXTRA_GROUPS_KEY = 'auth-extra-groups';
export const BOOTSTRAP_TOKEN_USAGE_AUTHENTICATION = 'usage-bootstrap-authentication';
export const BOOTSTRAP_TOKEN_USAGE_SIGNING = 'usage-bootstrap-signing';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAP_DEFAULT_GROUP = 'system:bootstrappers';
/** kube's BootstrapGroupPattern, as its error message prints it. */
export const BOOTSTRAP_GROUP_PATTERN = '\\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z';

// kube's BootstrapTokenPattern (`\A([a-z0-9]{6})\.([a-z0-9]{16})\z`), the secret name's
// (`^bootstrap-token-([a-z0-9]{6})$`) and BootstrapGroupPattern. No `m` flag: `$` is the end.
const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const SECRET_NAME_RE = /^bootstrap-token-([a-z0-9]{6})$/;
const GROUP_RE = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** What is read of a stored Secret. */
export interface BootstrapTokenSecret {
  metadata: { name?: unknown; namespace?: unknown; uid?: unknown; deletionTimestamp?: unknown };
  type?: unknown;
  data?: unknown;
}

/** The id and secret of a bootstrap token, or undefined when the text is not one (kube's ParseToken). */
export function parseBootstrapToken(token: string): { id: string; secret: string } | undefined {
  // (a length test first: the pattern is linear anyway, but a 1 MB header costs nothing here)
  if (token.length !== 23) return undefined;
  const m = TOKEN_RE.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

/** The token id a Secret's name carries (`bootstrap-token-<id>`), or undefined (kube's ParseName). */
export function parseBootstrapTokenSecretName(name: string): string | undefined {
  return SECRET_NAME_RE.exec(name)?.[1];
}

/** The Secret's `data[key]` as text, "" when absent (kube's GetData: only `data`, never `stringData`). */
export function bootstrapSecretData(secret: BootstrapTokenSecret, key: string): string {
  return bootstrapSecretBytes(secret, key).toString('utf8');
}

function bootstrapSecretBytes(secret: BootstrapTokenSecret, key: string): Buffer {
  const data = secret.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return Buffer.alloc(0);
  const v = (data as Record<string, unknown>)[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64') : Buffer.alloc(0);
}

export function isBootstrapTokenSecret(secret: { type?: unknown } | undefined): boolean {
  return secret?.type === BOOTSTRAP_TOKEN_SECRET_TYPE;
}

/**
 * kube's GetExpiration: no `expiration` never expires; one Go's time.Parse(time.RFC3339) refuses
 * counts as expired; else expired once the time is reached. `remainingMs` is left when not expired
 * (undefined for a token without expiration).
 */
export function bootstrapTokenExpiration(secret: BootstrapTokenSecret, nowMs: number): { expired: boolean; remainingMs?: number } {
  const expiration = bootstrapSecretData(secret, BOOTSTRAP_TOKEN_EXPIRATION_KEY);
  if (expiration === '') return { expired: false };
  const t = parseRFC3339(expiration);
  if (!t) return { expired: true };
  // (the fraction to the millisecond: Go compares nanoseconds, hearth's clock has milliseconds)
  const at = t.ms + (t.fraction ? Number(`0.${t.fraction}`) * 1000 : 0);
  const remainingMs = at - nowMs;
  return remainingMs <= 0 ? { expired: true } : { expired: false, remainingMs };
}

/**
 * kube's GetGroups: `system:bootstrappers` and the `auth-extra-groups` (comma-separated), sorted
 * and without repeats; one group outside kube's pattern fails them all, with kube's error.
 */
export function bootstrapTokenGroups(secret: BootstrapTokenSecret): { groups: string[] } | { error: string } {
  const groups = new Set([BOOTSTRAP_DEFAULT_GROUP]);
  const extra = bootstrapSecretData(secret, BOOTSTRAP_TOKEN_EXTRA_GROUPS_KEY);
  if (extra !== '') {
    for (const group of extra.split(',')) {
      if (!GROUP_RE.test(group)) return { error: `bootstrap group ${JSON.stringify(group)} is invalid (must match ${BOOTSTRAP_GROUP_PATTERN})` };
      groups.add(group);
    }
  }
  // sets.String's List(): byte order, which for these ASCII names is code-unit order.
  return { groups: [...groups].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
}

/** The current Secret of this name in kube-system, or undefined. */
export type BootstrapSecretLookup = (name: string) => BootstrapTokenSecret | undefined;

/** What the cache reads of a commit's events (the log's LogEvent, as far as it goes). */
export interface SecretCommitEvent {
  type: string;
  key: { res: string; ns: string; name: string };
  object?: unknown;
}

/**
 * kube-system's `bootstrap-token-<id>` Secrets in memory, as kube's authenticator reads them from
 * its informer's lister: filled from the store at start and kept by the commit stream (whose
 * listeners run before a write's caller hears of it), so a request with a bootstrap token costs a
 * Map lookup, never a database read. Only names a token can ask for are kept.
 */
export class BootstrapTokenSecretCache {
  private readonly byName = new Map<string, BootstrapTokenSecret>();

  constructor(current: Iterable<BootstrapTokenSecret>) {
    for (const secret of current) {
      const name = secret.metadata.name;
      if (typeof name === 'string' && parseBootstrapTokenSecretName(name) !== undefined) this.byName.set(name, secret);
    }
  }

  /** A commit's events: kube-system's token-named Secrets written or deleted. */
  observe(events: readonly SecretCommitEvent[]): void {
    for (const e of events) {
      if (e.key.res !== 'secrets' || e.key.ns !== BOOTSTRAP_TOKEN_NAMESPACE || parseBootstrapTokenSecretName(e.key.name) === undefined) continue;
      if (e.type === 'DELETED' || e.object === null || typeof e.object !== 'object') this.byName.delete(e.key.name);
      else this.byName.set(e.key.name, e.object as BootstrapTokenSecret);
    }
  }

  readonly lookup: BootstrapSecretLookup = (name) => this.byName.get(name);
}

/**
 * Why the Secret does not authenticate this token, in kube's words (its tokenErrorf lines), or
 * undefined when it does. Checks in kube's order.
 */
export function bootstrapTokenRefusal(secret: BootstrapTokenSecret, id: string, tokenSecret: string, nowMs: number): string | undefined {
  if (secret.metadata.deletionTimestamp) return 'is deleted and awaiting removal';
  if (!isBootstrapTokenSecret(secret) || secret.data === null || typeof secret.data !== 'object') return `has invalid type, expected ${BOOTSTRAP_TOKEN_SECRET_TYPE}.`;
  if (!constantTimeEqual(bootstrapSecretBytes(secret, BOOTSTRAP_TOKEN_SECRET_KEY), Buffer.from(tokenSecret))) return `has invalid value for key ${BOOTSTRAP_TOKEN_SECRET_KEY}.`;
  if (bootstrapSecretData(secret, BOOTSTRAP_TOKEN_ID_KEY) !== id) return `has invalid value for key ${BOOTSTRAP_TOKEN_ID_KEY}.`;
  if (bootstrapTokenExpiration(secret, nowMs).expired) return 'has expired.';
  if (bootstrapSecretData(secret, BOOTSTRAP_TOKEN_USAGE_AUTHENTICATION) !== 'true') return `not marked ${BOOTSTRAP_TOKEN_USAGE_AUTHENTICATION}=true.`;
  const groups = bootstrapTokenGroups(secret);
  if ('error' in groups) return `has invalid value for key ${BOOTSTRAP_TOKEN_EXTRA_GROUPS_KEY}: ${groups.error}.`;
  return undefined;
}

/** crypto/subtle's ConstantTimeCompare: different lengths differ at once, else no early exit. */
function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface BootstrapTokenAuthenticatorOptions {
  /** Reads kube-system's Secrets by name (BootstrapTokenSecretCache's, as kube reads its informer's lister). */
  lookup: BootstrapSecretLookup;
  /** The API server's audiences (--api-audiences, else the issuers), which these tokens carry. */
  implicitAudiences?: readonly string[];
  /** kube's V(3) lines for a token whose Secret refuses it (debug, never error level). */
  debug?: (line: string) => void;
  now?: () => number;
}

/** The bootstrap token authenticator (kube's TokenAuthenticator over kube-system's Secrets). */
export function bootstrapTokenAuthenticator(opts: BootstrapTokenAuthenticatorOptions): TokenAuthenticator {
  const implicitAudiences = opts.implicitAudiences ?? [];
  const now = opts.now ?? Date.now;
  return {
    name: 'bootstrap-token',
    authenticateToken(token, audiences): AuthResult {
      let granted: string[] | undefined;
      if (audiences !== undefined && audiences.length > 0) {
        granted = implicitAudiences.filter((a) => audiences.includes(a));
        if (granted.length === 0) return undefined;
      }
      const parsed = parseBootstrapToken(token);
      if (!parsed) return undefined;
      const secretName = BOOTSTRAP_TOKEN_SECRET_PREFIX + parsed.id;
      const secret = opts.lookup(secretName);
      if (!secret) {
        opts.debug?.(`No secret of name ${secretName} to match bootstrap bearer token`);
        return undefined;
      }
      const refusal = bootstrapTokenRefusal(secret, parsed.id, parsed.secret, now());
      if (refusal !== undefined) {
        opts.debug?.(`Bootstrap secret ${BOOTSTRAP_TOKEN_NAMESPACE}/${secretName} matching bearer token ${refusal}`);
        return undefined;
      }
      const groups = bootstrapTokenGroups(secret) as { groups: string[] };
      const user = { name: BOOTSTRAP_USER_PREFIX + parsed.id, groups: groups.groups };
      return granted ? { user, audiences: granted } : { user };
    },
  };
}
