// The cache in front of the token authenticators, as kube-apiserver puts one around its token
// union (k8s.io/apiserver/pkg/authentication/token/cache, with kube-apiserver's defaults
// TokenSuccessCacheTTL 10 s, TokenFailureCacheTTL 0): a token that authenticated is taken at its
// word for 10 s without its signature, issuer or object checks being redone; a token that failed
// is never cached, so each attempt pays again (and a bad token's cost stays what the
// authenticators bound it to). The key is an HMAC-SHA256, under a key made at start, of the
// audiences and the token (length-prefixed), so its entries hold no token. Concurrent requests
// with the same key share one check (kube's getOrWait). Bounded: past MAX_ENTRIES the least
// recently used go first (kube: 32 stripes of 128-entry LRUs).
//
// Hashing the key costs ~10 µs, a tenth of a cheap request's whole CPU (bench:auth), so a
// connection remembers its last token and the entry it found: a client on a keep-alive connection
// sending the same token again (kubectl, client-go) reaches its entry without hashing, while it
// is still in the cache and its time is not over. The memo (a WeakMap on the socket) holds one
// token per open connection, which that connection's requests carry anyway.
//
// As in kube, a token whose ServiceAccount or bound object was deleted meanwhile may keep
// authenticating until its entry's 10 s are over.
import { createHmac, randomBytes } from 'node:crypto';
import type { AuthResult } from './authenticator.ts';
import { authenticateToken, type TokenAuthenticator } from './token.ts';

/** kube-apiserver's TokenSuccessCacheTTL default. */
export const TOKEN_SUCCESS_CACHE_TTL_MS = 10_000;
/** kube's 32 stripes × 128 entries. */
export const MAX_ENTRIES = 4096;

export interface TokenCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** Milliseconds, monotonic; injectable for tests. */
  now?: () => number;
}

interface Entry {
  result: AuthResult;
  expiresAt: number;
}

/** A connection's last token (without audiences: the bearer authenticator's) and where it was cached. */
interface ConnectionMemo {
  token: string;
  key: string;
  entry: Entry;
}

export interface CachedTokenAuthenticator extends TokenAuthenticator {
  /** `connection`: the request's socket, whose last token is remembered (see the header). */
  authenticateToken(token: string, audiences?: readonly string[], connection?: object): AuthResult | Promise<AuthResult>;
  size(): number;
}

/**
 * One TokenAuthenticator over the union of these (read at each call, so authenticators added to
 * the array later take part), with successes cached.
 */
export function cachedTokenAuthenticator(union: readonly TokenAuthenticator[], opts: TokenCacheOptions = {}): CachedTokenAuthenticator {
  const ttlMs = opts.ttlMs ?? TOKEN_SUCCESS_CACHE_TTL_MS;
  const maxEntries = opts.maxEntries ?? MAX_ENTRIES;
  const now = opts.now ?? (() => performance.now());
  const hmacKey = randomBytes(32);
  // A Map keeps insertion order: re-inserting on a hit makes it an LRU.
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<AuthResult>>();
  const byConnection = new WeakMap<object, ConnectionMemo>();

  function keyOf(token: string, audiences: readonly string[] | undefined): string {
    const h = createHmac('sha256', hmacKey);
    const auds = audiences ?? [];
    const len = Buffer.alloc(4);
    len.writeUInt32BE(auds.length);
    h.update(len);
    for (const a of auds) {
      len.writeUInt32BE(Buffer.byteLength(a));
      h.update(len).update(a);
    }
    len.writeUInt32BE(Buffer.byteLength(token));
    h.update(len).update(token);
    return h.digest('base64');
  }

  function remember(key: string, result: AuthResult): Entry | undefined {
    if (!result || !('user' in result) || ttlMs <= 0) return undefined;
    const entry = { result, expiresAt: now() + ttlMs };
    entries.delete(key);
    entries.set(key, entry);
    while (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    return entry;
  }

  return {
    name: 'token-cache',
    size: () => entries.size,
    authenticateToken(token, audiences, connection) {
      const memoable = connection !== undefined && audiences === undefined;
      if (memoable) {
        const memo = byConnection.get(connection);
        if (memo && memo.token === token && memo.entry.expiresAt > now() && entries.get(memo.key) === memo.entry) return memo.entry.result;
      }
      const key = keyOf(token, audiences);
      const hit = entries.get(key);
      if (hit) {
        if (hit.expiresAt > now()) {
          entries.delete(key);
          entries.set(key, hit);
          if (memoable) byConnection.set(connection, { token, key, entry: hit });
          return hit.result;
        }
        entries.delete(key);
      }
      const pending = inFlight.get(key);
      if (pending) return pending;
      const check = authenticateToken(union, token, audiences).then(
        (result) => {
          inFlight.delete(key);
          const entry = remember(key, result);
          if (entry && memoable) byConnection.set(connection, { token, key, entry });
          return result;
        },
        (e: unknown) => {
          inFlight.delete(key);
          throw e;
        },
      );
      inFlight.set(key, check);
      return check;
    },
  };
}
