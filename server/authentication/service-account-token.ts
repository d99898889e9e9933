// Service-account tokens: the JWTs the TokenRequest API issues and the token authenticator that
// knows them again, as kube's pkg/serviceaccount/jwt.go (signing, the authenticator), claims.go
// (the claims, the validator) and openidmetadata.go (issuer discovery) do.
//
// Signatures are made and checked by `jose` (panva/jose): a maintained, dependency-free JOSE
// library on WebCrypto that refuses `alg: none` and algorithm confusion, so hearth has no
// hand-written signature code. What is kube's own lives here: the claims and their order, the
// issuer test before any signature work, audiences, the 60 s leeway (go-jose's DefaultLeeway),
// and the lookups that make a token die with its ServiceAccount or bound object.
import { randomUUID } from 'node:crypto';
import { CompactSign, compactVerify, exportJWK } from 'jose';
import type { ServiceAccountKey, ServiceAccountKeys } from '../pki/service-account-keys.ts';
import type { AuthResult } from './authenticator.ts';
import type { TokenAuthenticator } from './token.ts';
import type { UserInfo } from './user.ts';

/** kubeadm's issuer, and so hearth's default (kube-apiserver has none). */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const OPENID_CONFIG_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';
/** kube's WarnOnlyBoundTokenExpirationSeconds and ExpirationExtensionSeconds (claims.go). */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7;
export const EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60;
/** go-jose's jwt.DefaultLeeway: clocks may disagree by a minute. */
const LEEWAY_SECONDS = 60;
/**
 * Longer tokens are not read at all (not ours: the union goes on, and refuses them). A token of
 * hearth's is about 1 KiB; a few hundred audiences still fit.
 */
const MAX_TOKEN_LENGTH = 32 * 1024;
/** Tokens whose signature was checked, so a token user's requests cost no RSA work each. */
const VERIFIED_CACHE_SIZE = 4096;

export const SERVICE_ACCOUNT_USERNAME_PREFIX = 'system:serviceaccount:';
export const ALL_SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
export const EXTRA_POD_NAME = 'authentication.kubernetes.io/pod-name';
export const EXTRA_POD_UID = 'authentication.kubernetes.io/pod-uid';
export const EXTRA_NODE_NAME = 'authentication.kubernetes.io/node-name';
export const EXTRA_NODE_UID = 'authentication.kubernetes.io/node-uid';
export const EXTRA_CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';

export interface ServiceAccountTokenOptions {
  /** --service-account-issuer: the first issues, all are accepted. */
  issuers: readonly string[];
  /** --api-audiences (default: the issuers). */
  apiAudiences: readonly string[];
  keys: ServiceAccountKeys;
}

/** The kinds a token names and the authenticator looks up again. */
export type TokenObjectResource = 'serviceaccounts' | 'pods' | 'secrets' | 'nodes';
/** What the authenticator reads of an object. */
export interface TokenObject {
  metadata: { name?: unknown; uid?: unknown; deletionTimestamp?: unknown };
}
/** The current object, or undefined when there is none (nodes: namespace ""). */
export type TokenObjectLookup = (resource: TokenObjectResource, namespace: string, name: string) => TokenObject | undefined;

export interface ObjectRef {
  name: string;
  uid: string;
}

/** What a token says (kube's Claims arguments). */
export interface TokenClaimsInput {
  namespace: string;
  serviceAccount: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
  /** The pod's node for a pod-bound token, or the node a token is bound to. */
  node?: { name: string; uid?: string };
  audiences: readonly string[];
  expirationSeconds: number;
  /** Seconds after which a (time-extended) token is stale: kube's warnafter. */
  warnAfterSeconds?: number;
  /** Unix seconds. */
  now: number;
}

/** The parts of a token authenticated as kube's validator reads them. */
interface PrivateClaims {
  namespace: string;
  serviceaccount: Partial<ObjectRef>;
  pod?: Partial<ObjectRef>;
  secret?: Partial<ObjectRef>;
  node?: Partial<ObjectRef>;
}

export interface VerifiedToken {
  payload: Record<string, unknown>;
}

export class ServiceAccountTokens implements TokenAuthenticator {
  readonly name = 'service-account-token';
  readonly issuer: string;
  readonly apiAudiences: readonly string[];
  private readonly keys: ServiceAccountKeys;
  private readonly verifier: ServiceAccountJwtVerifier;

  constructor(opts: ServiceAccountTokenOptions, private readonly lookup: TokenObjectLookup) {
    if (opts.issuers.length === 0) throw new Error('service account tokens need an issuer');
    this.issuer = opts.issuers[0]!;
    this.apiAudiences = opts.apiAudiences;
    this.keys = opts.keys;
    this.verifier = new ServiceAccountJwtVerifier(opts.issuers, opts.keys);
  }

  /** A signed token with kube's claims, in the key order kube's tokens have (go-jose sorts them). */
  async issue(input: TokenClaimsInput): Promise<{ token: string; jti: string }> {
    const jti = randomUUID();
    const k8s: Record<string, unknown> = { namespace: input.namespace };
    if (input.node) k8s.node = input.node.uid ? { name: input.node.name, uid: input.node.uid } : { name: input.node.name };
    if (input.pod) k8s.pod = { name: input.pod.name, uid: input.pod.uid };
    if (input.secret) k8s.secret = { name: input.secret.name, uid: input.secret.uid };
    k8s.serviceaccount = { name: input.serviceAccount.name, uid: input.serviceAccount.uid };
    if (input.warnAfterSeconds) k8s.warnafter = input.now + input.warnAfterSeconds;
    const payload = {
      aud: [...input.audiences],
      exp: input.now + input.expirationSeconds,
      iat: input.now,
      iss: this.issuer,
      jti,
      'kubernetes.io': k8s,
      nbf: input.now,
      sub: SERVICE_ACCOUNT_USERNAME_PREFIX + input.namespace + ':' + input.serviceAccount.name,
    };
    return { token: await signServiceAccountJwt(this.keys, payload), jti };
  }

  async authenticateToken(token: string, audiences?: readonly string[]): Promise<AuthResult> {
    const verified = await this.verifier.verify(token);
    if (!verified || 'error' in verified) return verified;
    return this.validate(verified.payload, audiences);
  }

  /** Audiences, times, then the objects the token names (kube's authenticator and validator, in their order). */
  private validate(payload: Record<string, unknown>, requested?: readonly string[]): AuthResult {
    const audiences = tokenAudiencesFor(payload.aud, this.apiAudiences, requested);
    if ('error' in audiences) return audiences;
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.nbf === 'number' && now + LEEWAY_SECONDS < payload.nbf) return { error: 'service account token is not valid yet' };
    if (typeof payload.exp === 'number' && now - LEEWAY_SECONDS > payload.exp) return { error: 'service account token has expired' };
    if (typeof payload.iat === 'number' && now + LEEWAY_SECONDS < payload.iat) return { error: 'service account token is issued in the future' };

    const claims = privateClaimsOf(payload['kubernetes.io']);
    const ns = claims.namespace;
    const saName = str(claims.serviceaccount.name);
    const deletedBefore = (now - LEEWAY_SECONDS) * 1000;
    const sa = this.lookup('serviceaccounts', ns, saName);
    if (!sa) return { error: `serviceaccounts "${saName}" not found` };
    if (str(sa.metadata.uid) !== str(claims.serviceaccount.uid)) return { error: `service account UID (${str(sa.metadata.uid)}) does not match claim (${str(claims.serviceaccount.uid)})` };
    if (deletedSince(sa, deletedBefore)) return { error: `service account ${ns}/${saName} has been deleted` };

    const INVALIDATED = { error: 'service account token has been invalidated' };
    if (claims.secret) {
      const secret = this.lookup('secrets', ns, str(claims.secret.name));
      if (!secret) return INVALIDATED;
      if (str(secret.metadata.uid) !== str(claims.secret.uid)) return { error: `secret UID (${str(secret.metadata.uid)}) does not match service account secret ref claim (${str(claims.secret.uid)})` };
      if (deletedSince(secret, deletedBefore)) return INVALIDATED;
    }
    let pod: ObjectRef | undefined;
    if (claims.pod) {
      const found = this.lookup('pods', ns, str(claims.pod.name));
      if (!found) return INVALIDATED;
      if (str(found.metadata.uid) !== str(claims.pod.uid)) return { error: `pod UID (${str(found.metadata.uid)}) does not match service account pod ref claim (${str(claims.pod.uid)})` };
      if (deletedSince(found, deletedBefore)) return INVALIDATED;
      pod = { name: str(claims.pod.name), uid: str(claims.pod.uid) };
    }
    let node: { name: string; uid: string } | undefined;
    if (claims.node) {
      // A pod-bound token only tells its pod's node; a node-bound one lives with its node.
      if (!claims.pod) {
        const found = this.lookup('nodes', '', str(claims.node.name));
        if (!found) return INVALIDATED;
        if (str(found.metadata.uid) !== str(claims.node.uid)) return { error: `node UID (${str(found.metadata.uid)}) does not match service account node ref claim (${str(claims.node.uid)})` };
        if (deletedSince(found, deletedBefore)) return INVALIDATED;
      }
      node = { name: str(claims.node.name), uid: str(claims.node.uid) };
    }
    return { user: serviceAccountUser(ns, saName, str(claims.serviceaccount.uid), { pod, node, jti: str(payload.jti) }), audiences: audiences.audiences };
  }

  /** /.well-known/openid-configuration (openidmetadata.go's openIDMetadata, its field order). */
  openIDConfiguration(jwksUri: string): Buffer {
    const algs = [...new Set(this.discoveryKeys().map((k) => k.alg))].sort();
    return Buffer.from(JSON.stringify({ issuer: this.issuer, jwks_uri: jwksUri, response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: algs }));
  }

  /** /openid/v1/jwks: the public verification keys, as go-jose writes a JSONWebKeySet. */
  async jwks(): Promise<Buffer> {
    const keys = [];
    for (const key of this.discoveryKeys()) {
      const jwk = await exportJWK(key.publicKey);
      // go-jose's field order: use, kty, kid, crv, alg, x, y, n, e.
      keys.push(omitUndefined({ use: 'sig', kty: jwk.kty, kid: key.kid, crv: jwk.crv, alg: key.alg, x: jwk.x, y: jwk.y, n: jwk.n, e: jwk.e }));
    }
    return Buffer.from(JSON.stringify({ keys }));
  }

  private discoveryKeys(): ServiceAccountKey[] {
    return this.keys.verifying;
  }
}

/**
 * The signed JWTs of hearth's service-account keys, as kube's JWTTokenAuthenticator reads them
 * before its validator: a token that is not a JWT, or names none of these issuers, is not ours
 * (no signature work); then a key (the `kid`'s, else each in turn) must verify it. The bound and
 * the legacy authenticators each have one, for their issuers. Verified tokens are remembered, so
 * a token user's requests cost no RSA work each.
 */
export class ServiceAccountJwtVerifier {
  private readonly issuers: ReadonlySet<string>;
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(
    issuers: Iterable<string>,
    private readonly keys: ServiceAccountKeys,
  ) {
    this.issuers = new Set(issuers);
  }

  /** The verified token's claims, an error (a token of ours whose signature fails), or undefined (not ours). */
  async verify(token: string): Promise<VerifiedToken | { error: string } | undefined> {
    if (token.length > MAX_TOKEN_LENGTH) return undefined;
    const known = this.verified.get(token);
    if (known) return known;
    // kube's hasCorrectIssuer: a token that does not name one of our issuers is not ours.
    const parts = token.split('.');
    if (parts.length !== 3 || token.trimStart().startsWith('{')) return undefined;
    const payload = decodeSegment(parts[1]!);
    if (!payload || typeof payload.iss !== 'string' || !this.issuers.has(payload.iss)) return undefined;
    const header = decodeSegment(parts[0]!);
    if (!header) return undefined;
    const checked = await this.verifySignature(token, typeof header.kid === 'string' ? header.kid : '');
    if ('error' in checked) return checked;
    const verified = { payload };
    this.remember(token, verified);
    return verified;
  }

  private async verifySignature(token: string, kid: string): Promise<{ ok: true } | { error: string }> {
    const keys = kid ? this.keys.verifying.filter((k) => k.kid === kid) : this.keys.verifying;
    if (keys.length === 0) return { error: 'invalid signature, no keys found' };
    for (const key of keys) {
      try {
        await compactVerify(token, key.publicKey, { algorithms: [key.alg] });
        return { ok: true };
      } catch {
        // the next key, if any (rotation)
      }
    }
    return { error: 'go-jose/go-jose: error in cryptographic primitive' };
  }

  private remember(token: string, verified: VerifiedToken): void {
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, verified);
  }
}

/** A JWT of these claims, signed with the signing key and naming its kid (kube's jwtTokenGenerator). */
export function signServiceAccountJwt(keys: ServiceAccountKeys, payload: Record<string, unknown>): Promise<string> {
  const { signing } = keys;
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: signing.alg, kid: signing.kid }).sign(signing.privateKey);
}

/** kube's ServiceAccountInfo.UserInfo. */
export function serviceAccountUser(namespace: string, name: string, uid: string, bound: { pod?: ObjectRef; node?: { name: string; uid: string }; jti?: string } = {}): UserInfo {
  const extra: Record<string, string[]> = {};
  if (bound.pod?.name && bound.pod.uid) {
    extra[EXTRA_POD_NAME] = [bound.pod.name];
    extra[EXTRA_POD_UID] = [bound.pod.uid];
  }
  if (bound.jti) extra[EXTRA_CREDENTIAL_ID] = [`JTI=${bound.jti}`];
  if (bound.node?.name) {
    extra[EXTRA_NODE_NAME] = [bound.node.name];
    if (bound.node.uid) extra[EXTRA_NODE_UID] = [bound.node.uid];
  }
  const user: UserInfo = { name: SERVICE_ACCOUNT_USERNAME_PREFIX + namespace + ':' + name, uid, groups: [ALL_SERVICE_ACCOUNTS_GROUP, `system:serviceaccounts:${namespace}`] };
  if (Object.keys(extra).length) user.extra = extra;
  return user;
}

/** A base64url JSON object segment of a JWT, or undefined when it is not one. */
function decodeSegment(segment: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * kube's audience test (JWTTokenAuthenticator): a token without audiences carries the API
 * server's (implicit); it must share one with those asked for (the API server's unless a
 * TokenReview names others). The audiences it is good for, or kube's error.
 */
export function tokenAudiencesFor(aud: unknown, implicit: readonly string[], requested?: readonly string[]): { audiences: string[] } | { error: string } {
  const tokenAudiences = audiencesOf(aud);
  const effective = tokenAudiences.length ? tokenAudiences : implicit;
  const target = requested ?? implicit;
  const audiences = effective.filter((a) => target.includes(a));
  if (implicit.length && audiences.length === 0) return { error: `token audiences ${goQuoteList(effective)} is invalid for the target audiences ${goQuoteList(target)}` };
  return { audiences };
}

function audiencesOf(aud: unknown): string[] {
  if (typeof aud === 'string') return aud ? [aud] : [];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
}

function privateClaimsOf(v: unknown): PrivateClaims {
  const o = isObject(v) ? v : {};
  const ref = (r: unknown) => (isObject(r) ? { name: str(r.name), uid: str(r.uid) } : undefined);
  return { namespace: str(o.namespace), serviceaccount: ref(o.serviceaccount) ?? {}, pod: ref(o.pod), secret: ref(o.secret), node: ref(o.node) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Deleted (a deletionTimestamp) before the leeway's start: kube's invalidIfDeletedBefore. */
function deletedSince(obj: TokenObject, beforeMs: number): boolean {
  const ts = obj.metadata.deletionTimestamp;
  return typeof ts === 'string' && Date.parse(ts) < beforeMs;
}

/** Go's %q of a []string: ["a" "b"]. */
function goQuoteList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

function omitUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
