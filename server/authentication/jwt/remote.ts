// The issuer's documents over HTTPS: its OpenID discovery document and its JSON Web Key Set, fetched
// with node:https so that the authenticator's own CA bundle (issuer.certificateAuthority,
// --oidc-ca-file) is trusted instead of — not besides — the host's roots, as kube's http.Client
// with RootCAs does. Bounded: a timeout, a body size limit, no redirects followed.
import https from 'node:https';

/** Larger documents are refused (a JWKS of a few dozen keys is a few tens of KiB). */
const MAX_DOCUMENT_BYTES = 1024 * 1024;

export interface FetchOptions {
  /** PEM bundle to trust; undefined for the host's roots. */
  ca?: string;
  timeoutMs: number;
}

/** A GET as the WHATWG fetch jose's createRemoteJWKSet calls ([customFetch]) expects. */
export function httpsGet(url: string, opts: FetchOptions, signal?: AbortSignal): Promise<Response> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch (e) {
      reject(e as Error);
      return;
    }
    if (u.protocol !== 'https:') {
      reject(new Error(`unsupported protocol scheme ${JSON.stringify(u.protocol.replace(/:$/, ''))}`));
      return;
    }
    const req = https.get(u, { ca: opts.ca, timeout: opts.timeoutMs, signal, headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_DOCUMENT_BYTES) {
          res.destroy(new Error(`response body larger than ${MAX_DOCUMENT_BYTES} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers }));
      });
    });
    req.on('timeout', () => req.destroy(new Error(`Get ${JSON.stringify(url)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)));
    req.on('error', reject);
  });
}

/** go-oidc's provider discovery: the document's issuer must be ours and name its jwks_uri. */
export async function discover(issuerUrl: string, discoveryUrl: string | undefined, opts: FetchOptions): Promise<{ jwksUri: string }> {
  const wellKnown = discoveryUrl || issuerUrl.replace(/\/+$/, '') + '/.well-known/openid-configuration';
  const res = await httpsGet(wellKnown, opts);
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${res.statusText}: ${body}`);
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (e) {
    throw new Error(`oidc: failed to decode provider discovery object: ${(e as Error).message}`);
  }
  const d = (doc !== null && typeof doc === 'object' ? doc : {}) as { issuer?: unknown; jwks_uri?: unknown };
  if (d.issuer !== issuerUrl) throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(issuerUrl)} got ${JSON.stringify(d.issuer ?? '')}`);
  if (typeof d.jwks_uri !== 'string' || d.jwks_uri === '') throw new Error('oidc: provider discovery object has no jwks_uri');
  return { jwksUri: d.jwks_uri };
}
