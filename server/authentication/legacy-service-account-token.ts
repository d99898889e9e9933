// Legacy service-account tokens: the long-lived JWTs kept in Secrets of type
// `kubernetes.io/service-account-token`, as kube's pkg/serviceaccount/legacy.go makes (LegacyClaims,
// which the tokens controller signs) and validates them, with the tracking kube added in 1.26-1.30
// (LegacyServiceAccountTokenTracking, ...CleanUp, GA): each successful use stamps the Secret's
// `kubernetes.io/legacy-token-last-used` label with the UTC date, and a Secret labelled
// `kubernetes.io/legacy-token-invalid-since` no longer authenticates.
//
// kube-apiserver runs a second JWT authenticator for them (pkg/kubeapiserver/authenticator/config.go,
// newLegacyServiceAccountAuthenticator): issuer `kubernetes/serviceaccount` only, the same keys
// and API audiences as bound tokens, placed before the bound one. Its signature work is the bound
// authenticator's (ServiceAccountJwtVerifier); what is here is the validator: the claims, the
// Secret whose token must be this one, the ServiceAccount whose uid the token names.
//
// kube patches the last-used label inside the request; hearth writes it without the request
// waiting for it (at most one write per Secret per day, and none while one is on its way), so a
// token user's request costs no commit. A failed write is logged, never the request's failure.
import { timingSafeEqual } from 'node:crypto';
import type { ServiceAccountKeys } from '../pki/service-account-keys.ts';
import type { AuthResult } from './authenticator.ts';
import type { TokenAuthenticator } from './token.ts';
import { SERVICE_ACCOUNT_USERNAME_PREFIX, ServiceAccountJwtVerifier, serviceAccountUser, signServiceAccountJwt, tokenAudiencesFor } from './service-account-token.ts';
import { isDNS1123Label, isDNS1123Subdomain } from '../validation/names.ts';

/** kube's serviceaccount.LegacyIssuer: the `iss` of every Secret-based token. */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
/** kube's LastUsedLabelKey and InvalidSinceLabelKey. */
export const LAST_USED_LABEL = 'kubernetes.io/legacy-token-last-used';
export const INVALID_SINCE_LABEL = 'kubernetes.io/legacy-token-invalid-since';
/** v1.SecretTypeServiceAccountToken and the annotations naming its ServiceAccount. */
export const SERVICE_ACCOUNT_TOKEN_SECRET_TYPE = 'kubernetes.io/service-account-token';
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SERVICE_ACCOUNT_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
/** The warning kube adds when the token's Secret is listed in its ServiceAccount's `secrets` (auto-generated before 1.24). */
export const AUTO_GENERATED_TOKEN_WARNING = 'Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.';

// The private claims of legacyPrivateClaims.
const CLAIM_NAMESPACE = 'kubernetes.io/serviceaccount/namespace';
const CLAIM_SECRET_NAME = 'kubernetes.io/serviceaccount/secret.name';
const CLAIM_SERVICE_ACCOUNT_NAME = 'kubernetes.io/serviceaccount/service-account.name';
const CLAIM_SERVICE_ACCOUNT_UID = 'kubernetes.io/serviceaccount/service-account.uid';

export interface ServiceAccountRef {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * kube's LegacyClaims with the issuer: `sub` and the four private claims, no expiry, no
 * audience. In go-jose's order (it writes the merged claims sorted by name).
 */
export function legacyTokenClaims(sa: ServiceAccountRef, secretName: string): Record<string, unknown> {
  return {
    iss: LEGACY_ISSUER,
    [CLAIM_NAMESPACE]: sa.namespace,
    [CLAIM_SECRET_NAME]: secretName,
    [CLAIM_SERVICE_ACCOUNT_NAME]: sa.name,
    [CLAIM_SERVICE_ACCOUNT_UID]: sa.uid,
    sub: SERVICE_ACCOUNT_USERNAME_PREFIX + sa.namespace + ':' + sa.name,
  };
}

/** The token the tokens controller puts in a Secret: LegacyClaims signed with the service-account signing key. */
export function issueLegacyToken(keys: ServiceAccountKeys, sa: ServiceAccountRef, secretName: string): Promise<string> {
  return signServiceAccountJwt(keys, legacyTokenClaims(sa, secretName));
}

/** What the validator reads of a Secret (as the registry presents it: data base64). */
export interface LegacyTokenSecret {
  metadata: { name?: unknown; namespace?: unknown; uid?: unknown; labels?: Record<string, string>; deletionTimestamp?: unknown };
  data?: Record<string, string>;
}

/** What the validator reads of a ServiceAccount. */
export interface LegacyTokenServiceAccount {
  metadata: { uid?: unknown; deletionTimestamp?: unknown };
  secrets?: unknown;
}

/** The objects a legacy token is checked against, and the one write its use makes. */
export interface LegacyTokenObjects {
  secret(namespace: string, name: string): LegacyTokenSecret | undefined;
  serviceAccount(namespace: string, name: string): LegacyTokenServiceAccount | undefined;
  /** Sets the Secret's last-used label to date, if it is still the Secret of that uid; the caller does not wait. */
  markUsed(namespace: string, name: string, uid: string, date: string): void;
}

export class LegacyServiceAccountTokens implements TokenAuthenticator {
  readonly name = 'legacy-service-account-token';
  private readonly verifier: ServiceAccountJwtVerifier;

  constructor(
    keys: ServiceAccountKeys,
    /** --api-audiences (default: the issuers): legacy tokens have no audience, so they carry these. */
    private readonly apiAudiences: readonly string[],
    private readonly objects: LegacyTokenObjects,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.verifier = new ServiceAccountJwtVerifier([LEGACY_ISSUER], keys);
  }

  async authenticateToken(token: string, audiences?: readonly string[]): Promise<AuthResult> {
    const verified = await this.verifier.verify(token);
    if (!verified || 'error' in verified) return verified;
    const granted = tokenAudiencesFor(verified.payload.aud, this.apiAudiences, audiences);
    if ('error' in granted) return granted;
    return this.validate(token, verified.payload, granted.audiences);
  }

  /** kube's legacyValidator.Validate (with lookup, as kube-apiserver runs it), its checks in its order and its messages. */
  private validate(token: string, claims: Record<string, unknown>, audiences: string[]): AuthResult {
    const subject = str(claims.sub);
    if (!subject) return { error: 'sub claim is missing' };
    const namespace = str(claims[CLAIM_NAMESPACE]);
    if (!namespace) return { error: 'namespace claim is missing' };
    const secretName = str(claims[CLAIM_SECRET_NAME]);
    if (!secretName) return { error: 'secretName claim is missing' };
    const saName = str(claims[CLAIM_SERVICE_ACCOUNT_NAME]);
    if (!saName) return { error: 'serviceAccountName claim is missing' };
    const saUid = str(claims[CLAIM_SERVICE_ACCOUNT_UID]);
    if (!saUid) return { error: 'serviceAccountUID claim is missing' };
    const split = splitServiceAccountUsername(subject);
    if (!split || split.namespace !== namespace || split.name !== saName) return { error: 'sub claim is invalid' };

    // The token dies with its Secret, and with a change of the token the Secret holds.
    const secret = this.objects.secret(namespace, secretName);
    if (!secret || secret.metadata.deletionTimestamp) return { error: 'Token has been invalidated' };
    if (!sameToken(secret.data?.token, token)) return { error: "Token does not match server's copy" };

    // ...and with its ServiceAccount (name and uid).
    const sa = this.objects.serviceAccount(namespace, saName);
    if (!sa) return { error: `serviceaccounts "${saName}" not found` };
    if (sa.metadata.deletionTimestamp) return { error: `ServiceAccount ${namespace}/${saName} has been deleted` };
    if (str(sa.metadata.uid) !== saUid) return { error: `ServiceAccount UID (${str(sa.metadata.uid)}) does not match claim (${saUid})` };

    // A Secret marked invalid (by the cleaner, or by hand) refuses; its use is still recorded.
    if (secret.metadata.labels?.[INVALID_SINCE_LABEL]) {
      this.recordUse(namespace, secretName, secret);
      return {
        error: `the token in secret ${namespace}/${secretName} for service account ${namespace}/${saName} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '${INVALID_SINCE_LABEL}' label from the secret to temporarily allow use of this token`,
      };
    }
    const autoGenerated = Array.isArray(sa.secrets) && sa.secrets.some((ref) => isObject(ref) && ref.name === secretName);
    this.recordUse(namespace, secretName, secret);
    // Legacy tokens have no jti: the user has no credential-id extra (kube's ServiceAccountInfo has none).
    const user = serviceAccountUser(namespace, saName, saUid);
    return autoGenerated ? { user, audiences, warnings: [AUTO_GENERATED_TOKEN_WARNING] } : { user, audiences };
  }

  /** kube's patchSecretWithLastUsedDate: today's UTC date, unless the label says today or tomorrow (another server's clock). */
  private recordUse(namespace: string, name: string, secret: LegacyTokenSecret): void {
    const now = this.now();
    const today = utcDate(now);
    const tomorrow = utcDate(new Date(now.getTime() + 24 * 60 * 60 * 1000));
    const lastUsed = secret.metadata.labels?.[LAST_USED_LABEL];
    if (lastUsed === today || lastUsed === tomorrow) return;
    this.objects.markUsed(namespace, name, str(secret.metadata.uid), today);
  }
}

/** Go's time.Format("2006-01-02") in UTC. */
export function utcDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/**
 * kube's serviceaccount.SplitUsername: system:serviceaccount:<namespace>:<name>, the namespace a
 * DNS-1123 label and the name a DNS-1123 subdomain.
 */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USERNAME_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USERNAME_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (isDNS1123Label(namespace).length || isDNS1123Subdomain(name).length) return undefined;
  return { namespace, name };
}

/** The Secret's data.token (base64) against the presented token, in constant time (kube's subtle.ConstantTimeCompare). */
function sameToken(stored: unknown, token: string): boolean {
  if (typeof stored !== 'string') return false;
  const held = Buffer.from(stored, 'base64');
  const given = Buffer.from(token, 'utf8');
  return held.length === given.length && timingSafeEqual(held, given);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
