// Authentication: each authenticator looks at the request and either names the user, says
// nothing (no credential of its kind), or rejects a bad credential (401). Requests with no
// credential at all are anonymous. The chain runs as kube's union: errors are kept while the
// next authenticators are asked, and are a 401 only when none of them names the user.
import { createHash, X509Certificate } from 'node:crypto';
import type { Socket } from 'node:net';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type Koa from 'koa';
import { ANONYMOUS, type AuthenticatedState, type UserInfo } from './user.ts';
import { unauthorized } from '../errors.ts';
import { userFromPeerCertificate } from '../pki/certificates.ts';
import type { AuthenticationMetrics } from '../metrics/authentication.ts';

export type AuthenticatingContext = Koa.ParameterizedContext<AuthenticatedState>;

/**
 * A user (with the audiences a token was valid for, when audiences were asked of it, and the
 * warnings kube's authenticator adds to the response), an error, or no opinion.
 */
export type AuthResult = { user: UserInfo; audiences?: readonly string[]; warnings?: readonly string[] } | { error: string } | undefined;

export interface AuthenticationOptions {
  /** Anonymous auth (--anonymous-auth, or the config file's anonymous section). */
  anonymous: boolean;
  /** When set, anonymous requests are allowed to these paths only (kube's conditions: exact paths). */
  anonymousPaths?: readonly string[];
  /** Records an authenticator's warnings on the response (the HTTP layer's Warning headers). */
  onWarnings?: (ctx: AuthenticatingContext, warnings: readonly string[]) => void;
  /** authentication_attempts, authentication_duration_seconds, authenticated_user_requests. */
  metrics?: AuthenticationMetrics;
}

/**
 * What an authenticator reads of a request: Node's IncomingMessage (HTTP/1.1, node:http2) and
 * hearth's own HTTP/2 request both have it, so authentication needs nothing from http/.
 */
export interface CredentialSource {
  /** The request's headers, lower-cased names (Authorization for bearer tokens). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The connection's socket, a TLSSocket when served over TLS: its peer certificate names x509 users. */
  readonly socket: Socket;
}

export interface Authenticator {
  name: string;
  authenticate(req: CredentialSource): AuthResult | Promise<AuthResult>;
}

/**
 * x509 client certificates verified during the TLS handshake against the cluster CA and the
 * --client-ca-file bundle. The listener trusts the --requestheader-client-ca-file CA too (kube's
 * serving ClientCAs are the union); given `clientCaPem`, only a chain that ends at one of its CAs
 * names a user here, as kube's x509 authenticator verifies against the client CAs alone.
 */
export function x509Authenticator(clientCaPem?: string): Authenticator {
  const anchors = clientCaPem === undefined ? undefined : caFingerprints(clientCaPem);
  // The peer certificate is fixed for a connection's life: read it once per connection (req.socket
  // is the connection's TLS socket over HTTP/1.1 and HTTP/2 alike).
  const byConnection = new WeakMap<object, AuthResult | typeof NO_CERTIFICATE>();
  return {
    name: 'x509',
    authenticate(req) {
      const key: object = req.socket;
      const known = byConnection.get(key);
      if (known !== undefined) return known === NO_CERTIFICATE ? undefined : known;
      const socket = req.socket as TLSSocket;
      if (typeof socket.getPeerCertificate !== 'function') return undefined;
      const result = fromCertificate(socket, anchors);
      byConnection.set(key, result ?? NO_CERTIFICATE);
      return result;
    },
  };
}

/** Remembered for a connection that presented no certificate (one map lookup per request). */
const NO_CERTIFICATE = Symbol('no certificate');

function fromCertificate(socket: TLSSocket, anchors: ReadonlySet<string> | undefined): AuthResult {
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  if (!socket.authorized || (anchors && !chainAnchoredIn(socket, anchors))) return { error: `x509: certificate signed by unknown authority` };
  const user = userFromPeerCertificate(cert);
  // kube's CommonNameUserConversion: no common name, no opinion (the chain goes on: a bearer
  // token, else anonymous), not an error.
  if (!user) return undefined;
  const groups = user.groups.includes('system:authenticated') ? user.groups : [...user.groups, 'system:authenticated'];
  return { user: { name: user.name, groups, extra: { [CREDENTIAL_ID_KEY]: [x509CredentialId(cert.raw)] } } };
}

/** The SHA-256 fingerprints (Node's AA:BB:… form) of a PEM bundle's certificates. */
export function caFingerprints(pem: string): Set<string> {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  return new Set(blocks.map((block) => new X509Certificate(block).fingerprint256));
}

/**
 * Whether the peer's verified chain (leaf, intermediates, and the trusted CA the handshake found)
 * passes through one of these CAs. The listener verified the chain against all the CAs it
 * trusts; this says which one vouched for it. Only meaningful when socket.authorized.
 */
export function chainAnchoredIn(socket: TLSSocket, anchors: ReadonlySet<string>): boolean {
  const seen = new Set<DetailedPeerCertificate>();
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert && cert.fingerprint256 && !seen.has(cert)) {
    if (anchors.has(cert.fingerprint256)) return true;
    seen.add(cert);
    cert = cert.issuerCertificate;
  }
  return false;
}

/** The user extra naming the credential a request was made with (kube's user.CredentialIDKey). */
export const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';

/** kube's credential ID of a client certificate: X509SHA256= and the hex SHA-256 of its DER. */
export function x509CredentialId(der: Buffer): string {
  return `X509SHA256=${createHash('sha256').update(der).digest('hex')}`;
}

/**
 * The chain as kube's union authenticator runs it: the first user named wins; an error does not
 * stop the chain (the admin's certificate is refused by the request-header authenticator and
 * accepted by x509), it is kept and answered with 401 only when nobody names a user.
 */
export function authenticationMiddleware(authenticators: Authenticator[], opts: AuthenticationOptions): Koa.Middleware<AuthenticatedState> {
  // Synchronous while every authenticator answers synchronously (x509 does): no promise per
  // request is awaited before the rest of the chain runs.
  return (ctx, next) => {
    const start = opts.metrics ? performance.now() : 0;
    let error: AuthResult;
    for (let i = 0; i < authenticators.length; i++) {
      const r = authenticators[i].authenticate(ctx.req);
      if (isPromise(r)) return authenticateFrom(authenticators, i, r, error, ctx, next, opts, start);
      if (!r) continue;
      if ('user' in r) return authenticated(r, ctx, next, opts, start);
      error ??= r;
    }
    return authenticated(error, ctx, next, opts, start);
  };
}

function isPromise(r: AuthResult | PromiseLike<AuthResult>): r is PromiseLike<AuthResult> {
  return !!r && typeof (r as PromiseLike<AuthResult>).then === 'function';
}

/** The rest of the chain once an authenticator answered with a promise (the same order and rules). */
async function authenticateFrom(authenticators: Authenticator[], i: number, pending: PromiseLike<AuthResult>, error: AuthResult, ctx: AuthenticatingContext, next: Koa.Next, opts: AuthenticationOptions, start: number): Promise<void> {
  let r = await pending;
  while (!(r && 'user' in r)) {
    if (r) error ??= r;
    if (++i >= authenticators.length) return authenticated(error, ctx, next, opts, start);
    r = await authenticators[i].authenticate(ctx.req);
  }
  await authenticated(r, ctx, next, opts, start);
}

/**
 * kube's AuthenticatedGroupAdder: the user with system:authenticated added. Made once per user
 * object: a token cache's answer is the same object on every request for its TTL, so its
 * requests share one copy instead of making two objects each (users are never modified).
 */
const authenticatedCopies = new WeakMap<UserInfo, UserInfo>();
function withAuthenticatedGroup(user: UserInfo): UserInfo {
  let copy = authenticatedCopies.get(user);
  if (!copy) authenticatedCopies.set(user, (copy = { ...user, groups: [...user.groups, 'system:authenticated'] }));
  return copy;
}

/**
 * The request's user, or 401. Measured as kube's recordAuthMetrics measures its authenticator: a
 * refused credential is an error, no user (anonymous off, or not for this path) a failure, and an
 * anonymous request a success (kube's anonymous authenticator names system:anonymous).
 */
function authenticated(r: AuthResult, ctx: AuthenticatingContext, next: Koa.Next, opts: AuthenticationOptions, start: number): Promise<void> {
  const metrics = opts.metrics;
  if (r && 'error' in r) {
    metrics?.record('error', (performance.now() - start) / 1000);
    throw unauthorized();
  }
  let user = r?.user;
  if (!user) {
    if (!opts.anonymous || (opts.anonymousPaths && !opts.anonymousPaths.includes(ctx.path))) {
      metrics?.record('failure', (performance.now() - start) / 1000);
      throw unauthorized();
    }
    user = ANONYMOUS;
  } else if (!user.groups.includes('system:authenticated')) {
    user = withAuthenticatedGroup(user);
  }
  metrics?.record('success', (performance.now() - start) / 1000, user.name);
  ctx.state.user = user;
  if (r?.warnings?.length) opts.onWarnings?.(ctx, r.warnings);
  return next();
}
