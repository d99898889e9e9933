// kube's cached token authenticator (k8s.io/apiserver/pkg/authentication/token/cache), which
// wraps an authenticator that is slow to ask (the webhook): an answer is kept for its TTL — a
// user for successTtl, "not mine" (no user, no error) for failureTtl; an error (the webhook down,
// or refusing the token with a reason) only when cacheErrors, which kube's webhook wiring leaves
// off. Answers are keyed by an HMAC-SHA256, under a random per-process key, of the length-prefixed
// token and audiences, so neither the token nor a guessable hash of it stays in memory, and
// untrusted input cannot aim collisions. Identical lookups in flight share one call (kube's
// singleflight). The cache holds at most `maxEntries` answers (kube's comment sizes its cache for
// 32k tokens); the oldest go first.
import { createHmac, randomBytes } from 'node:crypto';
import type { AuthResult } from './authenticator.ts';
import type { TokenAuthenticator } from './token.ts';

export interface TokenCacheOptions {
  /** How long a user is kept (0: not kept). */
  successTtlMs: number;
  /** How long "not this authenticator's token" is kept (0: not kept). */
  failureTtlMs: number;
  /** Whether errors are kept too (kube's cacheErrs; false for the webhook). */
  cacheErrors?: boolean;
  /** The most answers kept (default 32768). */
  maxEntries?: number;
  /** The clock (tests move it). */
  now?: () => number;
}

export const DEFAULT_TOKEN_CACHE_ENTRIES = 32 * 1024;

interface CacheRecord {
  result: AuthResult;
  expires: number;
}

/** A TokenAuthenticator in front of `inner` that remembers its answers as kube's token cache does. */
export class CachedTokenAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private readonly records = new Map<string, CacheRecord>();
  private readonly inflight = new Map<string, Promise<AuthResult>>();
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

  authenticateToken(token: string, audiences?: readonly string[]): AuthResult | Promise<AuthResult> {
    const key = this.keyOf(token, audiences);
    const cached = this.records.get(key);
    if (cached) {
      if (cached.expires > this.now()) return cached.result;
      this.records.delete(key);
    }
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const lookup = (async () => {
      try {
        const result = await this.inner.authenticateToken(token, audiences);
        this.remember(key, result);
        return result;
      } finally {
        this.inflight.delete(key);
      }
    })();
    this.inflight.set(key, lookup);
    return lookup;
  }

  private remember(key: string, result: AuthResult): void {
    let ttl: number;
    if (result && 'error' in result) {
      if (!this.opts.cacheErrors) return;
      ttl = this.opts.failureTtlMs;
    } else {
      ttl = result ? this.opts.successTtlMs : this.opts.failureTtlMs;
    }
    if (!(ttl > 0)) return;
    this.records.delete(key);
    while (this.records.size >= this.maxEntries) this.records.delete(this.records.keys().next().value!);
    this.records.set(key, { result, expires: this.now() + ttl });
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
