// Requests as one identity, the way the authorization and identity tests make them: a client
// certificate or a bearer token (or neither: anonymous), over a fresh HTTPS connection each time
// (no agent, so one identity's connection never serves another's request).
import https from 'node:https';

export type Json = Record<string, unknown>;

/** Who is calling: a client certificate, a bearer token, or nothing (anonymous). */
export interface Credentials {
  cert?: string;
  key?: string;
  token?: string;
}

/** A value inside a decoded answer (undefined when the path is not there). */
export function dig(v: unknown, ...keys: (string | number)[]): unknown {
  for (const k of keys) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined;
  return v;
}

/** What a test reads of an answer: its status, its JSON ({} when it is not JSON), its text. */
export interface IdentityResponse {
  status: number;
  json: Json;
  text: string;
}

/** The server a requester talks to, read when each request is made (tests start it in a `before` hook). */
type ServerRef = () => { url: string; pki: { caCertPem: string } };

/** `requestAs(who, method, path, body?, contentType?)` against the server `server()` names. */
export function requester(server: ServerRef) {
  return function requestAs(who: Credentials, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<IdentityResponse> {
    const s = server();
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string | number> = { accept: 'application/json' };
      if (who.token) headers.authorization = `Bearer ${who.token}`;
      if (payload) Object.assign(headers, { 'content-type': contentType, 'content-length': payload.length });
      const req = https.request(`${s.url}${path}`, { method, headers, agent: false, ca: s.pki.caCertPem, cert: who.cert, key: who.key }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let json: Json = {};
          try {
            json = JSON.parse(text) as Json;
          } catch {
            // not JSON (a 404 of a path, say): the test reads text
          }
          resolve({ status: res.statusCode!, json, text });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  };
}
