// A real OpenID Connect issuer for tests: HTTPS on loopback with its own CA (its certificate is
// not hearth's), serving /.well-known/openid-configuration and a JWKS, and signing ID tokens with
// jose. Keys rotate (rotateKey: the new key signs, the JWKS serves only it), the listener can stop
// and start again on its port (an issuer that is down, then up), and it counts its fetches.
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { SignJWT, exportJWK, generateKeyPair, type JWTPayload } from 'jose';
import { ensurePki } from '../../server/pki/certificates.ts';
import { freePort } from './hearth-process.ts';

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: Record<string, unknown>;
}

export interface OidcIssuer {
  /** The issuer URL, https://127.0.0.1:PORT (with the path, when one was asked). */
  url: string;
  /** The PEM CA that signed the issuer's serving certificate. */
  caPem: string;
  /** The client id its tokens are for by default. */
  clientId: string;
  /** The key that signs now. */
  key: SigningKey;
  /** Fetches of the discovery document and the JWKS so far. */
  fetches: { discovery: number; jwks: number };
  /** A signed token: iss, aud, sub, iat and exp (an hour) by default, overridden by claims. */
  token(claims?: Record<string, unknown>, opts?: { key?: SigningKey; header?: Record<string, unknown> }): Promise<string>;
  /** A new key signs from now on, and the JWKS serves only it. */
  rotateKey(): Promise<SigningKey>;
  /** A key the JWKS never serves (for tokens signed by someone else). */
  foreignKey(): Promise<SigningKey>;
  /** Serves (again) on its port. */
  listen(): Promise<void>;
  /** Stops serving (the port is free; fetches fail). */
  down(): Promise<void>;
  close(): Promise<void>;
}

export async function newSigningKey(alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `key-${Math.random().toString(36).slice(2, 10)}`;
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, jwk };
}

/**
 * An issuer on loopback. `listen: false` picks its port but does not serve yet (an issuer that is
 * down when hearth starts); `pathPrefix` puts the issuer under a path (https://host:port/idp).
 */
export async function startOidcIssuer(opts: { clientId?: string; listen?: boolean; pathPrefix?: string } = {}): Promise<OidcIssuer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-oidc-pki-'));
  let pki;
  try {
    pki = await ensurePki(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const port = await freePort();
  const prefix = opts.pathPrefix ?? '';
  const url = `https://127.0.0.1:${port}${prefix}`;
  let keys = [await newSigningKey()];
  const fetches = { discovery: 0, jwks: 0 };
  const sockets = new Set<TLSSocket>();

  const server = https.createServer({ key: pki.servingKeyPem, cert: pki.servingCertPem }, (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === `${prefix}/.well-known/openid-configuration`) {
      fetches.discovery++;
      send(200, { issuer: url, jwks_uri: `${url}/keys`, response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] });
    } else if (req.url === `${prefix}/keys`) {
      fetches.jwks++;
      send(200, { keys: keys.map((k) => k.jwk) });
    } else send(404, { error: 'not found' });
  });
  server.on('secureConnection', (s: TLSSocket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const issuer: OidcIssuer = {
    url,
    caPem: pki.caCertPem,
    clientId: opts.clientId ?? 'hearth-test-client',
    get key() {
      return keys[0]!;
    },
    fetches,
    async token(claims = {}, o = {}) {
      const key = o.key ?? keys[0]!;
      const now = Math.floor(Date.now() / 1000);
      const payload: JWTPayload = { iss: url, aud: issuer.clientId, sub: 'alice-subject', iat: now, exp: now + 3600, ...claims };
      for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
      return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...o.header }).sign(key.privateKey);
    },
    async rotateKey() {
      keys = [await newSigningKey()];
      return keys[0]!;
    },
    foreignKey: () => newSigningKey(),
    listen: () => new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    }),
    down: () => new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
    close: () => issuer.down(),
  };
  if (opts.listen !== false) await issuer.listen();
  return issuer;
}
