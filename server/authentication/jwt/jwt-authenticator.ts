// One JWT authenticator (an OIDC issuer), as kube's plugin/pkg/authenticator/token/oidc/oidc.go:
// a token is this authenticator's only when its unverified `iss` is the issuer (hasCorrectIssuer),
// else no opinion, so the union asks the next one; then go-oidc v2's verifier in its order (issuer,
// audience, expiry, nbf with a minute's leeway, the signing algorithm, the signature), kube's
// audience check for several audiences (MatchAny), and the claim mappings, required claims and CEL
// rules. Distributed claims (_claim_names/_claim_sources) are not resolved: a groups claim must be
// in the token itself.
//
// Signatures and key sets are `jose` (panva/jose, already hearth's JOSE library for service-account
// tokens): its createRemoteJWKSet caches the issuer's JWKS (as long as go-oidc does: until a token
// names an unknown `kid`), refetches it then — at most once per cool-down (go-oidc has none), with a
// single fetch in flight — and selects keys by kid and alg; compactVerify, given the allowed
// algorithms, refuses `alg: none` and algorithm confusion. The claims are checked here rather than by
// jwtVerify, in go-oidc's order and words. Discovery is kube's: in the background, retried every
// 10 s until the issuer answers; until then its tokens are 401 ("authenticator not initialized")
// and the server runs.
import { compactVerify, createRemoteJWKSet, customFetch, errors as joseErrors, type JWTVerifyGetKey } from 'jose';
import { goQuote } from '../../go/strconv.ts';
import { goTime } from '../../go/time.ts';
import { CelEvaluationError, jsonToCel } from '../../registry/crd/cel/index.ts';
import { CREDENTIAL_ID_KEY, type AuthResult } from '../authenticator.ts';
import type { TokenAuthenticator } from '../token.ts';
import type { UserInfo } from '../user.ts';
import type { CompiledRule, JwtAuthenticatorSpec } from './config.ts';
import { discover, httpsGet, type FetchOptions } from './remote.ts';

/** Longer tokens are not read (no opinion; the union refuses them): bounded work per bad token. */
export const MAX_TOKEN_LENGTH = 64 * 1024;
/** go-oidc v2's leeway for nbf (exp has none; iat is not checked). */
const NBF_LEEWAY_SECONDS = 60;

export interface JwtTiming {
  /** Between discovery attempts while the issuer does not answer (kube: 10 s). */
  discoveryRetryMs?: number;
  /** After a JWKS fetch, how long an unknown kid waits before it may cause another (default 30 s). */
  keysCooldownMs?: number;
  /** Per HTTP request to the issuer (default 30 s, kube's http.Client timeout). */
  fetchTimeoutMs?: number;
}

export interface JwtAuthenticatorOptions {
  /** The API server's audiences: JWT authenticators are audience-agnostic (kube's WrapAudienceAgnosticToken). */
  apiAudiences: readonly string[];
  log: (line: string) => void;
  timing?: JwtTiming;
}

type Claims = Record<string, unknown>;

export class JwtAuthenticator implements TokenAuthenticator {
  readonly name: string;
  readonly issuer: string;
  private keys: JWTVerifyGetKey | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private discovering = false;
  private failing = false;
  private readonly audiences: ReadonlySet<string>;
  private readonly fetch: FetchOptions;

  constructor(
    private readonly spec: JwtAuthenticatorSpec,
    private readonly opts: JwtAuthenticatorOptions,
  ) {
    this.issuer = spec.config.issuer.url;
    this.name = `jwt:${this.issuer}`;
    this.audiences = new Set(spec.config.issuer.audiences ?? []);
    this.fetch = { ca: spec.config.issuer.certificateAuthority || undefined, timeoutMs: opts.timing?.fetchTimeoutMs ?? 30_000 };
  }

  /** Starts discovery in the background (kube's PollImmediateUntil). */
  start(): void {
    void this.discover();
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
  }

  /** Whether discovery succeeded (the JWKS URI is known). */
  get initialized(): boolean {
    return this.keys !== undefined;
  }

  private async discover(): Promise<void> {
    if (this.closed || this.discovering || this.keys) return;
    this.discovering = true;
    try {
      const { jwksUri } = await discover(this.issuer, this.spec.config.issuer.discoveryURL, this.fetch);
      const fetchOpts = this.fetch;
      this.keys = createRemoteJWKSet(new URL(jwksUri), {
        timeoutDuration: fetchOpts.timeoutMs,
        cooldownDuration: this.opts.timing?.keysCooldownMs ?? 30_000,
        // go-oidc's RemoteKeySet keeps its keys until a token names one it lacks: an issuer that is
        // down does not fail the tokens of keys already known.
        cacheMaxAge: Infinity,
        [customFetch]: (url: string, init: { signal: AbortSignal }) => httpsGet(url, fetchOpts, init.signal),
      });
      if (this.failing) this.opts.log(`oidc authenticator: initialized for issuer ${goQuote(this.issuer)}`);
    } catch (e) {
      // kube logs every attempt; once per outage is enough to see it.
      if (!this.failing) this.opts.log(`warning: oidc authenticator: initializing plugin: ${(e as Error).message} (retrying)`);
      this.failing = true;
      if (!this.closed) {
        this.retry = setTimeout(() => void this.discover(), this.opts.timing?.discoveryRetryMs ?? 10_000);
        this.retry.unref();
      }
    } finally {
      this.discovering = false;
    }
  }

  async authenticateToken(token: string, audiences?: readonly string[]): Promise<AuthResult> {
    if (token.length > MAX_TOKEN_LENGTH) return undefined;
    // Verified users are remembered by the token cache in front of the whole union (token-cache.ts).
    const untrusted = untrustedJwt(token);
    if (!untrusted || untrustedIssuer(untrusted.payload) !== this.issuer) return undefined;
    let granted: string[] | undefined;
    if (audiences !== undefined && audiences.length > 0) {
      granted = this.opts.apiAudiences.filter((a) => audiences.includes(a));
      if (granted.length === 0) return undefined;
    }
    if (!this.keys) return { error: 'oidc: authenticator not initialized' };
    const verifyError = await this.verify(token, untrusted, Date.now());
    if (verifyError) return { error: `oidc: verify token: ${verifyError}` };
    const r = this.userOf(untrusted.payload);
    if ('error' in r) return r;
    return granted ? { user: r.user, audiences: granted } : r;
  }

  /** go-oidc v2's IDTokenVerifier.Verify, then kube's audience check: an error text, or undefined. */
  private async verify(token: string, t: UntrustedJwt, now: number): Promise<string | undefined> {
    const aud = audiencesOf(t.payload.aud);
    const single = this.audiences.size === 1;
    if (single) {
      const clientId = [...this.audiences][0]!;
      if (!aud.includes(clientId)) return `oidc: expected audience ${goQuote(clientId)} got ${goQuoteList(aud)}`;
    }
    const exp = typeof t.payload.exp === 'number' ? t.payload.exp * 1000 : undefined;
    if (exp === undefined || exp < now) return `oidc: token is expired (Token Expiry: ${goTimeOf(exp)})`;
    if (typeof t.payload.nbf === 'number' && now + NBF_LEEWAY_SECONDS * 1000 < t.payload.nbf * 1000) {
      return `oidc: current time ${goTimeOf(now)} before the nbf (not before) time: ${goTimeOf(t.payload.nbf * 1000)}`;
    }
    const alg = typeof t.header.alg === 'string' ? t.header.alg : '';
    if (!this.spec.signingAlgs.includes(alg)) return `oidc: id token signed with unsupported algorithm, expected ${goQuoteList(this.spec.signingAlgs)} got ${goQuote(alg)}`;
    const signatureError = await this.verifySignature(token);
    if (signatureError) return `failed to verify signature: ${signatureError}`;
    if (!single && !aud.some((a) => this.audiences.has(a))) return `oidc: expected audience in ${goQuoteList([...this.audiences].sort())} got ${goQuoteList(aud)}`;
    return undefined;
  }

  private async verifySignature(token: string): Promise<string | undefined> {
    const algorithms = [...this.spec.signingAlgs];
    try {
      await compactVerify(token, this.keys!, { algorithms });
      return undefined;
    } catch (e) {
      if (e instanceof joseErrors.JWKSMultipleMatchingKeys) {
        // A token without a kid and several keys of its alg: go-oidc tries each.
        for await (const key of e as unknown as AsyncIterable<CryptoKey>) {
          try {
            await compactVerify(token, key, { algorithms });
            return undefined;
          } catch {
            // the next key
          }
        }
        return 'failed to verify id token signature';
      }
      if (e instanceof joseErrors.JWKSNoMatchingKey || e instanceof joseErrors.JWSSignatureVerificationFailed) return 'failed to verify id token signature';
      return `fetching keys oidc: get keys failed: ${(e as Error).message}`;
    }
  }

  /** kube's getUsername, getGroups, getUID, getExtra, required claims, then the CEL rules. */
  private userOf(claims: Claims): { user: UserInfo } | { error: string } {
    const mappings = this.spec.config.claimMappings;
    let celClaims: unknown;
    const celInput = () => (celClaims ??= jsonToCel(claims));
    try {
      // username
      let name: string;
      if (this.spec.username) {
        const v = evaluate(this.spec.username, { claims: celInput() }, 'oidc: error evaluating username claim expression');
        if (typeof v !== 'string') return { error: 'oidc: error evaluating username claim expression: username claim expression must return a string' };
        if (v === '') return { error: 'oidc: empty username via CEL expression is not allowed' };
        name = v;
      } else {
        const claim = mappings.username.claim ?? '';
        const v = stringClaim(claims, claim);
        if (v.error !== undefined) return { error: `oidc: parse username claims ${goQuote(claim)}: ${v.error}` };
        if (claim === 'email' && 'email_verified' in claims) {
          if (typeof claims.email_verified !== 'boolean') return { error: `oidc: parse 'email_verified' claim: json: cannot unmarshal ${jsonKind(claims.email_verified)} into Go value of type bool` };
          if (!claims.email_verified) return { error: 'oidc: email not verified' };
        }
        name = (mappings.username.prefix ?? '') + v.value;
      }
      // groups
      let groups: string[] = [];
      const groupsClaim = mappings.groups?.claim ?? '';
      if (groupsClaim && groupsClaim in claims) {
        const v = claims[groupsClaim];
        if (Array.isArray(v) && v.every((g) => typeof g === 'string')) groups = [...(v as string[])];
        else if (typeof v === 'string') groups = [v];
        else return { error: `oidc: parse groups claim ${goQuote(groupsClaim)}: json: cannot unmarshal ${jsonKind(v)} into Go value of type string` };
        const prefix = mappings.groups?.prefix ?? '';
        if (prefix) groups = groups.map((g) => prefix + g);
      } else if (this.spec.groups) {
        const v = evaluate(this.spec.groups, { claims: celInput() }, 'oidc: error evaluating group claim expression');
        const list = stringList(v);
        if (!list) return { error: 'oidc: error evaluating group claim expression: expression must return a string or a list of strings' };
        groups = list;
      }
      // uid
      let uid = '';
      if (mappings.uid?.claim) {
        const v = stringClaim(claims, mappings.uid.claim);
        if (v.error !== undefined) return { error: `oidc: parse uid claim ${goQuote(mappings.uid.claim)}: ${v.error}` };
        uid = v.value;
      } else if (this.spec.uid) {
        const v = evaluate(this.spec.uid, { claims: celInput() }, 'oidc: error evaluating uid claim expression');
        if (typeof v !== 'string') return { error: 'oidc: error evaluating uid claim expression: uid claim expression must return a string' };
        uid = v;
      }
      // extra: the token's jti names the credential (kube's CredentialIDForJTI), then the mappings
      const extra: Record<string, string[]> = {};
      if (typeof claims.jti === 'string') extra[CREDENTIAL_ID_KEY] = [`JTI=${claims.jti}`];
      for (const { key, rule } of this.spec.extra) {
        const v = evaluate(rule, { claims: celInput() }, '');
        const list = stringList(v);
        if (!list) return { error: `oidc: error evaluating extra claim expression: ${rule.expression}: expression must return a string or a list of strings` };
        if (list.length) extra[key] = list;
      }
      // required claims (claim + requiredValue rules)
      for (const rule of this.spec.config.claimValidationRules ?? []) {
        if (!rule.claim) continue;
        if (!(rule.claim in claims)) return { error: `oidc: required claim ${rule.claim} not present in ID token` };
        const v = claims[rule.claim];
        if (typeof v !== 'string') return { error: `oidc: parse claim ${rule.claim}: json: cannot unmarshal ${jsonKind(v)} into Go value of type string` };
        if (v !== (rule.requiredValue ?? '')) return { error: `oidc: required claim ${rule.claim} value does not match. Got = ${v}, want = ${rule.requiredValue ?? ''}` };
      }
      for (const rule of this.spec.claimValidationRules) {
        const v = evaluate(rule, { claims: celInput() }, 'oidc: error evaluating claim validation expression');
        if (typeof v !== 'boolean') return { error: 'oidc: error evaluating claim validation expression: validation expression must return a boolean' };
        if (!v) return { error: `oidc: error evaluating claim validation expression: validation expression '${rule.expression}' failed: ${rule.message ?? ''}` };
      }
      const user: UserInfo = { name, groups };
      if (uid) user.uid = uid;
      if (Object.keys(extra).length) user.extra = extra;
      if (this.spec.userValidationRules.length) {
        const celUser = jsonToCel({ username: name, uid, groups, extra });
        for (const rule of this.spec.userValidationRules) {
          const v = evaluate(rule, { user: celUser }, 'oidc: error evaluating user info validation rule');
          if (typeof v !== 'boolean') return { error: 'oidc: error evaluating user info validation rule: validation expression must return a boolean' };
          if (!v) return { error: `oidc: error evaluating user info validation rule: validation expression '${rule.expression}' failed: ${rule.message ?? ''}` };
        }
      }
      return { user };
    } catch (e) {
      if (e instanceof RuleError) return { error: e.message };
      throw e;
    }
  }
}

class RuleError extends Error {}

/** A rule's value, or a RuleError worded as kube's mapper ("expression '…' resulted in error: …"). */
function evaluate(rule: CompiledRule, vars: Record<string, unknown>, context: string): unknown {
  try {
    return rule.compiled.evaluate(vars);
  } catch (e) {
    if (!(e instanceof CelEvaluationError)) throw e;
    const text = `expression '${rule.expression}' resulted in error: ${e.message}`;
    throw new RuleError(context ? `${context}: ${text}` : `oidc: error evaluating extra claim expression: ${text}`);
  }
}

/** kube's convertCELValueToStringList: a string or a list of strings, empty ones dropped; null is none. */
function stringList(v: unknown): string[] | undefined {
  if (v === null) return [];
  if (typeof v === 'string') return v ? [v] : [];
  if (Array.isArray(v)) {
    if (!v.every((x) => typeof x === 'string')) return undefined;
    return (v as string[]).filter((x) => x !== '');
  }
  return undefined;
}

function stringClaim(claims: Claims, name: string): { value: string; error?: undefined } | { value?: undefined; error: string } {
  if (!(name in claims)) return { error: 'claim not present' };
  const v = claims[name];
  if (typeof v !== 'string') return { error: `json: cannot unmarshal ${jsonKind(v)} into Go value of type string` };
  return { value: v };
}

interface UntrustedJwt {
  header: Record<string, unknown>;
  payload: Claims;
}

/** A compact JWT's header and payload, unverified; undefined when the token is no compact JWT. */
export function untrustedJwt(token: string): UntrustedJwt | undefined {
  if (token.trimStart().startsWith('{')) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const header = decodeSegment(parts[0]!);
  const payload = decodeSegment(parts[1]!);
  return header && payload ? { header, payload } : undefined;
}

/** kube's untrustedIssuer, with Google's legacy issuer coalesced. */
function untrustedIssuer(payload: Claims): string | undefined {
  if (typeof payload.iss !== 'string') return undefined;
  return payload.iss === 'accounts.google.com' ? 'https://accounts.google.com' : payload.iss;
}

function decodeSegment(segment: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function audiencesOf(aud: unknown): string[] {
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
}

function jsonKind(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** Go's time.Time %v in UTC; the zero time for undefined. */
function goTimeOf(ms: number | undefined): string {
  return ms === undefined ? goTime(undefined) : goTime(new Date(ms).toISOString());
}

/** Go's %q of a []string: ["a" "b"]. */
function goQuoteList(list: readonly string[]): string {
  return `[${list.map(goQuote).join(' ')}]`;
}
