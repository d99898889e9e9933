// Bearer tokens, as kube's request/bearertoken authenticator reads them: the Authorization
// header's "Bearer <token>" (scheme case-insensitive, the header trimmed, split on single spaces
// at most three ways) goes to a union of token authenticators — static tokens, service-account
// and bootstrap tokens, OIDC, a webhook — the first to name a user wins. A bearer token that none
// of them accepts is 401 ("invalid bearer token"), never anonymous; a request without one gets
// no opinion, so the chain goes on (to anonymous, when that is on).
import type { AuthResult, Authenticator, CredentialSource } from './authenticator.ts';

/** One way of knowing a token (kube's authenticator.Token). */
export interface TokenAuthenticator {
  name: string;
  /**
   * The token's user, an error for a token this authenticator recognizes as its own and refuses
   * (expired, revoked), or undefined when it does not know the token. `connection` (the
   * request's socket, when there is a request) lets the token cache remember a connection's token.
   */
  authenticateToken(token: string, audiences?: readonly string[], connection?: object): AuthResult | Promise<AuthResult>;
}

/**
 * The token of an "Authorization: Bearer <token>" header, or undefined where kube finds none:
 * kube's SplitN(header, " ", 3) read without making the parts (every request with a token comes
 * here): the scheme is what precedes the first space, the token what follows it up to the next.
 */
export function bearerToken(req: CredentialSource): string | undefined {
  const raw = req.headers.authorization;
  const header = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!header) return undefined;
  // "bearer" in any case, then a space.
  if (header.charCodeAt(6) !== 0x20 || (!header.startsWith('Bearer') && header.slice(0, 6).toLowerCase() !== 'bearer')) return undefined;
  const end = header.indexOf(' ', 7);
  return (end < 0 ? header.slice(7) : header.slice(7, end)) || undefined;
}

export const INVALID_BEARER_TOKEN = 'invalid bearer token';

/**
 * A token through the union of token authenticators, in order (kube's union: the first user
 * wins; errors are kept only when nobody names a user). What TokenReview and the bearer
 * authenticator share.
 */
export async function authenticateToken(authenticators: readonly TokenAuthenticator[], token: string, audiences?: readonly string[]): Promise<AuthResult> {
  let error: AuthResult;
  for (const a of authenticators) {
    const r = await a.authenticateToken(token, audiences);
    if (r && 'user' in r) return r;
    if (r && !error) error = r;
  }
  return error ?? { error: INVALID_BEARER_TOKEN };
}

const invalidIfUnknown = (r: AuthResult): AuthResult => r ?? { error: INVALID_BEARER_TOKEN };

/** The Authenticator of a request's bearer token, over these token authenticators. */
export function bearerTokenAuthenticator(authenticators: readonly TokenAuthenticator[]): Authenticator {
  return {
    name: 'bearer-token',
    authenticate(req) {
      const token = bearerToken(req);
      if (token === undefined || authenticators.length === 0) return undefined;
      // One authenticator (the cache over the union) may answer at once: no promise on a hit.
      if (authenticators.length === 1) {
        const r = authenticators[0]!.authenticateToken(token, undefined, req.socket);
        return r instanceof Promise ? r.then(invalidIfUnknown) : invalidIfUnknown(r);
      }
      return authenticateToken(authenticators, token);
    },
  };
}
