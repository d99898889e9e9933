// Authentication: each authenticator looks at the request and either names the user, says
// nothing (no credential of its kind), or rejects a bad credential (401). Requests with no
// credential at all are anonymous. Later issues add tokens, OIDC, webhooks and proxies here.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Http2ServerRequest } from 'node:http2';
import type Koa from 'koa';
import { ANONYMOUS, type UserInfo } from './user.ts';
import { unauthorized } from '../errors.ts';
import { userFromPeerCertificate } from '../pki/certificates.ts';

export type AuthResult = { user: UserInfo } | { error: string } | undefined;

export interface Authenticator {
  name: string;
  authenticate(req: IncomingMessage | Http2ServerRequest): AuthResult | Promise<AuthResult>;
}

/** x509 client certificates verified against the cluster CA during the TLS handshake. */
export function x509Authenticator(): Authenticator {
  // The peer certificate is fixed for a connection's life: read it once per connection. Over
  // HTTP/2, req.socket is a proxy made per stream, so the key is the stream's session.
  const byConnection = new WeakMap<object, AuthResult>();
  return {
    name: 'x509',
    authenticate(req) {
      const socket = req.socket as TLSSocket;
      if (typeof socket.getPeerCertificate !== 'function') return undefined;
      const key: object = (req as Partial<Http2ServerRequest>).stream?.session ?? socket;
      if (byConnection.has(key)) return byConnection.get(key);
      const result = fromCertificate(socket);
      byConnection.set(key, result);
      return result;
    },
  };
}

function fromCertificate(socket: TLSSocket): AuthResult {
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  if (!socket.authorized) return { error: `x509: certificate signed by unknown authority` };
  const user = userFromPeerCertificate(cert);
  if (!user) return { error: 'x509: certificate has no common name' };
  return { user: user.groups.includes('system:authenticated') ? user : { ...user, groups: [...user.groups, 'system:authenticated'] } };
}

export function authenticationMiddleware(authenticators: Authenticator[], opts: { anonymous: boolean }): Koa.Middleware {
  return async (ctx, next) => {
    let user: UserInfo | undefined;
    for (const a of authenticators) {
      const r = await a.authenticate(ctx.req);
      if (!r) continue;
      if ('error' in r) throw unauthorized();
      user = r.user;
      break;
    }
    if (!user) {
      if (!opts.anonymous) throw unauthorized();
      user = ANONYMOUS;
    } else if (!user.groups.includes('system:authenticated')) {
      user = { ...user, groups: [...user.groups, 'system:authenticated'] };
    }
    ctx.state.user = user;
    await next();
  };
}
