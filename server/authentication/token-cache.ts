// kube's cached token authenticator (k8s.io/apiserver/pkg/authentication/token/cache), used twice
// as kube uses it:
// - around the whole token union (`cachedTokenAuthenticator`, kube-apiserver's defaults
//   TokenSuccessCacheTTL 10 s, TokenFailureCacheTTL 0): a token that authenticated is taken at
//   its word for 10 s without its signature, issuer or object checks being redone, so a token
//   whose ServiceAccount or bound object was deleted meanwhile may keep authenticating until its
//   entry's time is over, as in kube; a token that failed is never kept, so each attempt pays
//   again (and a bad token's cost stays what the authenticators bound it to);
// - around the TokenReview webhook (token-webhook.ts), whose TTL covers users and plain refusals.
// An answer is kept for its TTL — a user for successTtl, "not mine" (no user, no error) for
// failureTtl; an error (the webhook down, or refusing the token with a reason) only when
// cacheErrors, which kube's webhook wiring leaves off.
//
// Answers are keyed by an HMAC-SHA256, under a random per-process key, of the length-prefixed
// token and audiences, so neither the token nor a guessable hash of it stays in memory, and
// untrusted input cannot aim collisions. Identical lookups in flight share one call (kube's
// singleflight). At most `maxEntries` answers are kept (kube: 32 stripes of 128-entry LRUs for
// the union, 32k for the webhook); the least recently used go first.
//
// Hashing the key costs ~10 µs, a tenth of a cheap request's whole CPU (bench:auth), so a
// connection remembers its last token and the answer it found: a client on a keep-alive
// connection sending the same token again (kubectl, client-go) reaches its answer without
// hashing, while it is still cached and its time is not over. The memo (a WeakMap on the socket)
// holds one token per open connection, which that connection's requests carry anyway.
import { createHmac, randomBytes } from 'node:crypto';
import type { AuthResult } from './authenticator.ts';
import { authenticateToken, type TokenAuthenticator } from './token.ts';

/** kube-apiserver's TokenSuccessCacheTTL default (the union's cache). */
export const TOKEN_SUCCESS_CACHE_TTL_MS = 10_000;
/** kube's union cache: 32 stripes × 128 entries. */
export const MAX_ENTRIES = 4096;
/** kube's webhook cache size (its comment sizes it for 32k tokens). */
export const DEFAULT_TOKEN_CACHE_ENTRIES = 32 * 1024;

export interface TokenCacheOptions {
  /** How long a user is kept (0: not kept). */
  successTtlMs: number;
  /** How long "not this authenticator's token" is kept (0: not kept). */
  failureTtlMs: number;
  /** Whether errors are kept too (kube's cacheErrs; false for the webhook and the union). */
  cacheErrors?: boolean;
  /** The most answers kept (default 32768). */
  maxEntries?: number;
  /** The clock in milliseconds (tests move it). */
  now?: () => number;
}

interface CacheRecord {
  result: AuthResult;
  expires: number;
}

/** A connection's last token (without audiences: the bearer authenticator's) and its record. */
interface ConnectionMemo {
  token: string;
  key: string;
  record: CacheRecord;
}

/** A TokenAuthenticator in front of `inner` that remembers its answers as kube's token cache does. */
export class CachedTokenAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private readonly records = new Map<string, CacheRecord>();
  private readonly inflight = new Map<string, Promise<AuthResult>>();
  private readonly byConnection = new WeakMap<object, ConnectionMemo>();
  private readonly hmacKey = randomBytes(32);
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly inner: TokenAuthenticator,
    private readonly opts: TokenCacheOptions,
  ) {
    this.name = inner.name;
    this.maxEntries = opts.maxEntries ?? DEFAULT_TOKEN_CACHE_ENTRIES;
    this.now = opts.now ?? Date.now;
  }

  /** Answers kept now (expired ones included until they are next looked at or pushed out). */
  get size(): number {
    return this.records.size;
  }

  /** `connection`: the request's socket, whose last token is remembered (see the header). */
  authenticateToken(token: string, audiences?: readonly string[], connection?: object): AuthResult | Promise<AuthResult> {
    const memoable = connection !== undefined && audiences === undefined;
    if (memoable) {
      const memo = this.byConnection.get(connection);
      if (memo && memo.token === token && memo.record.expires > this.now() && this.records.get(memo.key) === memo.record) return memo.record.result;
    }
    const key = this.keyOf(token, audiences);
    const cached = this.records.get(key);
    if (cached) {
      this.records.delete(key);
      if (cached.expires > this.now()) {
        // Put back last: a Map keeps insertion order, so this makes it an LRU.
        this.records.set(key, cached);
        if (memoable) this.byConnection.set(connection, { token, key, record: cached });
        return cached.result;
      }
    }
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const lookup = (async () => {
      try {
        const result = await this.inner.authenticateToken(token, audiences);
        const record = this.remember(key, result);
        if (record && memoable) this.byConnection.set(connection, { token, key, record });
        return result;
      } finally {
        this.inflight.delete(key);
      }
    })();
    this.inflight.set(key, lookup);
    return lookup;
  }

  private remember(key: string, result: AuthResult): CacheRecord | undefined {
    let ttl: number;
    if (result && 'error' in result) {
      if (!this.opts.cacheErrors) return undefined;
      ttl = this.opts.failureTtlMs;
    } else {
      ttl = result ? this.opts.successTtlMs : this.opts.failureTtlMs;
    }
    if (!(ttl > 0)) return undefined;
    this.records.delete(key);
    while (this.records.size >= this.maxEntries) this.records.delete(this.records.keys().next().value!);
    const record = { result, expires: this.now() + ttl };
    this.records.set(key, record);
    return record;
  }

  /** kube's keyFunc: HMAC over the length-prefixed token, the audience count and each audience. */
  private keyOf(token: string, audiences: readonly string[] | undefined): string {
    const h = createHmac('sha256', this.hmacKey);
    const length = Buffer.alloc(4);
    const writeString = (s: string) => {
      const b = Buffer.from(s, 'utf8');
      length.writeUInt32BE(b.length >>> 0);
      h.update(length);
      h.update(b);
    };
    writeString(token);
    const auds = audiences ?? [];
    length.writeUInt32BE(auds.length >>> 0);
    h.update(length);
    for (const a of auds) writeString(a);
    return h.digest('base64');
  }
}

/**
 * kube-apiserver's cache around its token union: one TokenAuthenticator over these (read at each
 * call, so authenticators added to the array later take part), successes kept 10 s, failures never.
 */
export function cachedTokenAuthenticator(union: readonly TokenAuthenticator[], opts: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}): CachedTokenAuthenticator {
  const inner: TokenAuthenticator = { name: 'token-union', authenticateToken: (token, audiences) => authenticateToken(union, token, audiences) };
  return new CachedTokenAuthenticator(inner, { successTtlMs: opts.ttlMs ?? TOKEN_SUCCESS_CACHE_TTL_MS, failureTtlMs: 0, maxEntries: opts.maxEntries ?? MAX_ENTRIES, now: opts.now });
}
