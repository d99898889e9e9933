// Authentication: each authenticator looks at the request and either names the user, says
// nothing (no credential of its kind), or rejects a bad credential (401). Requests with no
// credential at all are anonymous. Later issues add tokens, OIDC, webhooks and proxies here.
import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type Koa from 'koa';
import { ANONYMOUS, type AuthenticatedState, type UserInfo } from './user.ts';
import { unauthorized } from '../errors.ts';
import { userFromPeerCertificate } from '../pki/certificates.ts';

type AuthenticatingContext = Koa.ParameterizedContext<AuthenticatedState>;

/** A user (with the audiences a token was valid for, when audiences were asked of it), an error, or no opinion. */
export type AuthResult = { user: UserInfo; audiences?: readonly string[] } | { error: string } | undefined;

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
 * --client-ca-file bundle (the listener trusts both).
 */
export function x509Authenticator(): Authenticator {
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
      const result = fromCertificate(socket);
      byConnection.set(key, result ?? NO_CERTIFICATE);
      return result;
    },
  };
}

/** Remembered for a connection that presented no certificate (one map lookup per request). */
const NO_CERTIFICATE = Symbol('no certificate');

function fromCertificate(socket: TLSSocket): AuthResult {
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  if (!socket.authorized) return { error: `x509: certificate signed by unknown authority` };
  const user = userFromPeerCertificate(cert);
  // kube's CommonNameUserConversion: no common name, no opinion (the chain goes on: a bearer
  // token, else anonymous), not an error.
  if (!user) return undefined;
  const groups = user.groups.includes('system:authenticated') ? user.groups : [...user.groups, 'system:authenticated'];
  return { user: { name: user.name, groups, extra: { [CREDENTIAL_ID_KEY]: [x509CredentialId(cert.raw)] } } };
}

/** The user extra naming the credential a request was made with (kube's user.CredentialIDKey). */
export const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';

/** kube's credential ID of a client certificate: X509SHA256= and the hex SHA-256 of its DER. */
export function x509CredentialId(der: Buffer): string {
  return `X509SHA256=${createHash('sha256').update(der).digest('hex')}`;
}

export function authenticationMiddleware(authenticators: Authenticator[], opts: { anonymous: boolean }): Koa.Middleware<AuthenticatedState> {
  // Synchronous while every authenticator answers synchronously (x509 does): no promise per
  // request is awaited before the rest of the chain runs.
  return (ctx, next) => {
    for (let i = 0; i < authenticators.length; i++) {
      const r = authenticators[i].authenticate(ctx.req);
      if (isPromise(r)) return authenticateFrom(authenticators, i, r, ctx, next, opts);
      if (!r) continue;
      return authenticated(r, ctx, next, opts);
    }
    return authenticated(undefined, ctx, next, opts);
  };
}

function isPromise(r: AuthResult | PromiseLike<AuthResult>): r is PromiseLike<AuthResult> {
  return !!r && typeof (r as PromiseLike<AuthResult>).then === 'function';
}

/** The rest of the chain once an authenticator answered with a promise (the same order and rules). */
async function authenticateFrom(authenticators: Authenticator[], i: number, pending: PromiseLike<AuthResult>, ctx: AuthenticatingContext, next: Koa.Next, opts: { anonymous: boolean }): Promise<void> {
  let r = await pending;
  while (!r && ++i < authenticators.length) r = await authenticators[i].authenticate(ctx.req);
  await authenticated(r, ctx, next, opts);
}

function authenticated(r: AuthResult, ctx: AuthenticatingContext, next: Koa.Next, opts: { anonymous: boolean }): Promise<void> {
  if (r && 'error' in r) throw unauthorized();
  let user = r?.user;
  if (!user) {
    if (!opts.anonymous) throw unauthorized();
    user = ANONYMOUS;
  } else if (!user.groups.includes('system:authenticated')) {
    user = { ...user, groups: [...user.groups, 'system:authenticated'] };
  }
  ctx.state.user = user;
  return next();
}
